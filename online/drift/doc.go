// Package drift holds the detectors that say when a stream changed: a
// Bernoulli CUSUM on a model's prequential errors (the labels' evidence),
// a CUSUM on standardized values with a known null (the recency of an
// arrival's nearest window rows, Recency), and ADWIN on values in [0, 1]
// (the uncertainty of the model's predictions). Each states its
// false-alarm rate on a stationary stream, resets after an alarm and says
// where it estimates the change began; Monitor runs them side by side and
// holds each one's alarms at least a spacing apart.
//
// It knows observations only as numbers and positions: nothing of
// windows, models, labels or Kafka. Package pipeline feeds it and reacts
// to its alarms through the learner.
package drift
