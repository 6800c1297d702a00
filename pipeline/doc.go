// Package pipeline is the core loop of the service without Kafka: it scores
// every example with the model in force, feeds the learner's window, joins
// late labels, scores predictions prequentially (test, then train) against
// a supervised-only baseline, and tracks which stream offsets the window
// still needs. It marks the predictions that go to review and explains
// predictions when asked (Explanation). The service, `streamer eval` and
// `streamer replay` all run it; it knows nothing of brokers.
package pipeline
