// Package review chooses, for each class, the calibrated probability
// below which a prediction goes to people for review, so that the
// predictions decided automatically reach a target precision. It works
// from graded predictions: predictions made before their label was known
// (prequential), with whether they were right.
//
// It knows nothing of the window, of models' internals or of Kafka: the
// learner hands it grades and class names and keeps what it returns with
// the model it publishes.
package review
