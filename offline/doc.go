// Package offline runs the learner on files instead of Kafka: `fit` trains
// a model on a LIBSVM or JSONL file, `predict` applies one, and `eval`
// replays a recorded stream through the service's core loop with labels
// revealed late, to measure prequential accuracy against the
// supervised-only baseline.
package offline
