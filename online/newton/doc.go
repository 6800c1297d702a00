// Package newton solves the binary linear semi-supervised objectives of
// docs/MATH.md (RLS, L2-SVM, LapRLS, LapSVM, TSVM, DA) by the modified
// finite Newton method: each Newton system by CGLS (or, for a narrow dense
// window, by a Gram matrix formed once), each step by an exact line search.
// Solve is the entry point: one Problem (rows, ±1 labels, an optional graph
// Laplacian), its Params and a warm start.
//
// It knows one binary problem at a time: nothing of classes, one versus
// rest, Spectral Regression, or the choice between algorithms.
package newton
