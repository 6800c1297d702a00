// Package online holds the learner: the linear semi-supervised SVM objectives
// of docs/MATH.md (RLS, L2-SVM, LapRLS, LapSVM, TSVM, DA), the modified finite
// Newton solver with CGLS and exact line search, warm starts, one-vs-rest
// multi-class models and the scheduling of periodic re-solves. It knows
// nothing of Kafka.
package online
