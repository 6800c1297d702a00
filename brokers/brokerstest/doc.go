// Package brokerstest helps tests talk to brokers securely (a throw-away
// certificate authority and certificates for TLS tests, pki.go), makes
// brokers misbehave (the embedded cluster holding a partition's fetches,
// faults.go; a consumer that joins a group and vanishes, ghost.go), and
// measures what the tests and the benchmarks watch from outside a service:
// a consumer group's state and rebalances (groupwatch.go) and the longest
// pause in a topic's records of one key (pause.go).
//
// It imports no package of this module: brokers' own tests import it, so
// it takes a brokers.Connection through the methods it needs (TopicReader)
// or its kafka-go client.
package brokerstest
