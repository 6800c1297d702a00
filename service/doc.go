// Package service runs the streaming job: it consumes examples and labels,
// scores every example with the model in force, feeds the learner's window,
// re-solves in the background, publishes predictions and snapshots, and
// restores itself from its newest snapshot. Its HTTP listener also scores
// examples on request (POST /v1/predict), with the same decoder and model,
// learning nothing from them. It is the only package that wires
// ingest, online, snapshot and publish together.
//
// A process takes one of three roles (roles.go): all of the above (role
// all); a scorer, one of the replicas of the consumer group on the
// examples topic, which follows the snapshot topic and scores with the
// newest model (scorer.go); or a learner, which holds the lease (package
// lease), reads every input partition by direct assignment, solves and
// publishes snapshots stamped with its epoch (learner.go).
package service
