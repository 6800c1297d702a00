// Package spectral holds Spectral Regression (Cai, He and Han; docs/MATH.md
// "Spectral Regression"): the leading eigenvectors of the label-augmented
// kNN affinity of a window, found by LOBPCG (or densely on small windows),
// become the targets of ridge regressions, solved by one shared Cholesky
// factor on dense windows or by block CG in the dual on sparse ones; a row
// is classified by the nearest class centroid in the embedding they span.
// It is multi-class by nature. Solve is the entry point: a Problem, its
// Settings, the classes and the last solve's State for a warm start.
//
// It knows nothing of the finite Newton objectives or of the choice
// between algorithms; it produces a model.Model.
package spectral
