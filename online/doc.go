// Package online holds the learner: the linear semi-supervised objectives
// of docs/MATH.md (RLS, L2-SVM, LapRLS, LapSVM, TSVM, DA) solved by the
// modified finite Newton method with CGLS and exact line search, one-vs-rest
// for several classes; Spectral Regression (sr.go: LOBPCG on the
// label-augmented graph, then ridge regressions by one shared Cholesky
// factor on dense windows or block CG in the dual on sparse ones), multi-class
// by nature; the Nyström kernel map (nystrom.go) that any of them can learn
// over; the choice between them (auto.go); warm starts from the last model;
// and the scheduling of periodic re-solves (Learner). It knows nothing of
// Kafka.
package online
