// Package brokers connects the service to Kafka clusters: the dialer and
// transport (TLS, SASL) shared by readers and writers, topic creation, offset
// lookups, direct reads of partitions outside any group (a range of offsets,
// the snapshot topic to its end, several partitions merged in the order of
// their records' times), and the embedded in-process cluster
// (franz-go's kfake) used by the demo, the tests and `streamer broker`.
package brokers
