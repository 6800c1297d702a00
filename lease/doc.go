// Package lease elects one leader among processes with kafka-go alone: a
// consumer group on a topic of one partition, whose holder is the leader.
// A balancer of its own keeps the partition with the member that holds
// it (each member says in its join's UserData since which generation it
// holds it), so that a standby joining does not move leadership; the
// partition moves only when its holder leaves or its session expires.
//
// The generation at which a member took the partition is its term: a
// caller stamps what it writes with it (streamer's learner stamps its
// snapshots), and readers refuse anything of an older term. That is the
// fencing kafka-go allows: it has no transactions, so a holder that was
// paused past its session cannot be stopped from writing; its writes are
// made harmless instead, and it learns it lost the lease at its next
// heartbeat (Term.Lost).
//
// The package knows nothing of snapshots, models or the service: only
// of the group, its generations and the partition.
package lease
