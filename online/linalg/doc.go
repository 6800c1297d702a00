// Package linalg holds the linear algebra that the solvers share: the data
// matrix X behind the Matrix interface (CSR over compact columns, Dense,
// VectorRows), its block products, the mapping of weights between a
// matrix's columns and its feature space (ColumnSpace), the outer products
// of the Gram matrices (AVX2 on amd64), the parallel ranges that every
// product splits its work by, small vector helpers, and a min-heap.
//
// It knows nothing of objectives, labels, models or streams: no solver,
// learner or Kafka type appears here.
package linalg
