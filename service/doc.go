// Package service runs the streaming job: it consumes examples and labels,
// scores every example with the model in force, feeds the learner's window,
// re-solves in the background, announces every model version before it
// scores (versions.go), publishes predictions and snapshots, and restores
// itself from its newest snapshot. Its HTTP endpoints (package
// service/httpapi) also score examples on request, with the same decoder
// and model, learning nothing from them.
//
// It wires the layers into a long-running process on Kafka: the consumer
// loops (package service/consumer) read into the core loop (package
// pipeline), whose output goes to publish, and whose models to snapshot,
// under the pin orders of control and, for a learner, the lease of lease.
// The configuration comes loaded and validated (package config). One
// runtime (runtime.go) owns every goroutine of a Run and waits for them.
// Its log collapses repeated warnings, its own retries' and kafka-go's,
// to a line per step with the count of the rest (package
// internal/collapse).
//
// A process takes one of three roles (roles.go): all of the above (role
// all); a scorer, one of the replicas of the consumer group on the
// examples topic, which follows the snapshot topic and scores with the
// newest model (scorerrole.go); or a learner, which holds the lease,
// reads every input partition by direct assignment, solves and publishes
// snapshots stamped with its epoch (learnerrole.go).
//
// It knows nothing of the in-process broker (its caller starts one and
// gives it the addresses), of where the configuration's keys are written,
// nor of HTTP beyond the addresses and answers the endpoints ask of it.
package service
