// Package pipeline is the core loop of the service without Kafka: it scores
// every example with the model in force, feeds the learner's window, joins
// late labels, scores predictions prequentially (test, then train) against
// a supervised-only baseline, watches the stream for drift (package
// online/drift's detectors, fed from what scoring and the join found) and
// tells the learner how to react to an alarm, and tracks which stream
// offsets the window still needs. It marks the predictions that go to
// review and explains predictions when asked (Explanation). The service,
// `streamer eval` and `streamer replay` all run it; it knows nothing of
// brokers.
package pipeline
