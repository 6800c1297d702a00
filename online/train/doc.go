// Package train turns a window of rows into a model: Solve runs the
// algorithm that Params names, one versus rest over the finite Newton
// objectives (package newton) for several classes, Spectral Regression
// (package spectral) over every class at once, or auto, which chooses
// between them from the window's kNN graph and the labels that arrive
// (auto.go, autotrial.go); it calibrates the result (Platt) and keeps in it
// the state of the next warm start. Params composes the methods' settings.
//
// It knows nothing of streams, windows that slide, or Kafka: the learner
// hands it a frozen window.
package train
