// Package embedded runs an in-process Kafka-protocol cluster (franz-go's
// kfake) for the demo, the tests, the benchmarks and `streamer broker`,
// with a keeper of the group sessions kfake can forget (sessions.go).
//
// It talks to its own cluster with kafka-go alone and knows nothing of
// the service or of package brokers, whose connections any client uses
// to reach it; no library package that runs in production imports it, so
// that kfake stays out of the service's build.
package embedded
