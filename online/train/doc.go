// Package train turns a window of rows into a model: Solve runs the
// algorithm that Params names, one versus rest over the finite Newton
// objectives (package newton) for several classes, Spectral Regression
// (package spectral) over every class at once, or auto, which chooses
// between them from the window's kNN graph and the labels that arrive
// (auto.go, autotrial.go). A two-class solve first chooses its λ by how
// well supervised fits on the older labels predict the newest (lambda.go).
// It calibrates the result (Platt), refuses a model that is not finite,
// and keeps in it the state of the next warm start. Params composes the
// methods' settings.
//
// It knows nothing of streams, windows that slide, or Kafka: the learner
// hands it a frozen window.
package train
