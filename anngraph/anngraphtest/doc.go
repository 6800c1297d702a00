// Package anngraphtest holds what the kNN graph's tests and the ann
// benchmark (`streamer bench ann`) share to measure a graph against brute
// force: a sample of rows, the recall of a listed neighbourhood against the
// exact distances, and benchmark sizes read from the environment.
//
// It works on row numbers and distances and imports no package of this
// module: anngraph's own tests import it, so it cannot take an
// anngraph.View.
package anngraphtest
