// Package vector holds the feature vectors shared by every stage: sparse
// (sorted indices and values) or dense, in float64, with the dot products and
// norms that the graph and the solver need.
package vector
