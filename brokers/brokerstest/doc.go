// Package brokerstest helps tests talk to brokers securely (a throw-away
// certificate authority and certificates for TLS tests, pki.go) and makes
// brokers misbehave: the embedded cluster holding a partition's fetches
// (faults.go), a consumer that joins a group and vanishes (ghost.go).
package brokerstest
