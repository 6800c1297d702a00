// Package control holds the control topic: operators' orders to every
// process that serves a model, one record per model, keyed by the model's
// name on a compacted topic so that the topic keeps each model's last
// order. Today an order pins the version that scores (or unpins it).
//
// A Follower reads the topic to its end at start and then follows it with
// a reader of one partition outside any consumer group, as every process
// of a deployment must see every order. It knows nothing of models or
// snapshots: what a pin means is up to the process that follows it.
package control
