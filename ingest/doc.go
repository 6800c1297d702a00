// Package ingest turns outside bytes into examples and labels: it decodes the
// JSON example and label schemas and LIBSVM/JSONL files, featurizes text and
// named features into hashed sparse vectors, and joins late labels to their
// examples with bounded memory. It knows nothing of graphs or solvers.
package ingest
