// Package model holds a learned classifier as it is served and kept in a
// snapshot: the classes, each binary problem's weights (Solution), the
// Platt calibration, the centroids of a Spectral Regression model, the
// Nyström map it applies first, and the scoring of a row (Scores,
// Predict), with the weights packed for it (Pack). Stamp orders models
// across learners; SolvedOn says what window a model was solved on.
//
// It knows nothing of how the weights were found: the solvers produce a
// Model, but none of them is imported here, so that a snapshot can be read
// and scored without them.
package model
