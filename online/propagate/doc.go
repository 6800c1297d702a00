// Package propagate spreads the window's labels over its kNN graph (label
// spreading, Zhou et al., "Learning with local and global consistency",
// 2004) and scores a new row by the vote of its nearest window rows: a
// prediction that follows the graph, where the learned models are linear
// in their inputs (or in a kernel map's). The learner blends the vote
// with its model's prediction when the graph follows the labels
// (docs/MATH.md, "The neighbours' vote").
//
// It knows the window only as an anngraph.View and the labels as class
// indices; it knows nothing of models, solvers or Kafka.
package propagate
