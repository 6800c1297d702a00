// Package offline runs the learner on files instead of Kafka: `fit` trains
// a model on a LIBSVM or JSONL file, `predict` applies one, and `eval`
// replays a recorded stream through the service's core loop with labels
// revealed late, to measure against the supervised-only baseline the
// prequential accuracy, the accuracy of every example's prediction at
// arrival, and that of the models in force on a separate test file, over
// one or several label seeds.
package offline
