// Package anngraph keeps an approximate k-nearest-neighbour graph over a
// sliding window of recent vectors, updated incrementally as vectors enter and
// leave, and exposes the graph Laplacian of the window as an operator for the
// solver. It knows nothing of labels, models or Kafka.
package anngraph
