// Package online holds the learner runtime: the sliding window of examples
// and their labels (a kNN graph from package anngraph, or a plain window
// until a graph is needed), the hand-off of inserts to a goroutine paced
// against scoring (Run), the scheduling of re-solves (Due, Solve), and the
// models in force and pinned (InForce, Scoring, Pin) that score new
// examples. A re-solve freezes the window and hands it to package train,
// warm-started from the model in force, over the Nyström map of package
// kernel when one is configured.
//
// The solvers live below it: train (the choice of algorithm, one versus
// rest), newton and spectral (the methods), eigen and linalg; model holds
// what is served and kept in snapshots. It knows nothing of Kafka.
package online
