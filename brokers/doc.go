// Package brokers connects the service to Kafka clusters: the dialer and
// transport (TLS, SASL) shared by readers and writers, topic creation, offset
// lookups, direct reads of partitions outside any group (a range of offsets,
// the snapshot topic to its end, several partitions merged in the order of
// their records' times). It reaches any cluster by its addresses and knows
// nothing of the in-process one (package brokers/embedded), so that kfake
// stays out of what the service builds on; what the tests and benchmarks
// measure of a group (GroupWatch, LongestPause) is in brokerstest.
package brokers
