// Package consumer runs the loops that read the input topics into the
// pipeline: in the consumer group, fetching, decoding, scoring and
// learning, publishing the predictions and dead letters and committing
// what was published (Consumer.Group); every partition by direct
// assignment, learning only (Consumer.Assigned); and the liveness watch
// of the group's partitions, which has a stalled reader created again
// (Consumer.WatchLiveness). It knows how far behind the brokers the
// process reads (Backlog), and paces the solver and the window's inserts
// by it (Schedule).
//
// It knows nothing of the roles, the lease, the snapshots or HTTP: the
// service wires it into a role, decides where a partition is read from,
// how a scorer predicts, and owns the goroutines it runs on. Its loops
// join the goroutines they start before they return.
package consumer
