// Package ingest turns outside bytes into examples and labels: it decodes the
// JSON example and label schemas and LIBSVM/JSONL files, featurizes text and
// named features into hashed sparse vectors, and joins late labels to their
// examples with bounded memory. It knows nothing of graphs or solvers.
//
// Input it rejects comes back as a *DecodeError whose Reason is fit for a
// dead-letter header and a metric label. Every bound on input is a field of
// Limits; the zero values of Limits, Featurizer, Decoder and JoinConfig mean
// the defaults their fields document.
package ingest
