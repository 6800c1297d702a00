// Package publish writes the service's output to Kafka: predictions, model
// snapshots, the announcements of model versions, drift events and dead
// letters, each with writer settings chosen on purpose (all in-sync
// replicas acknowledge, small batch delay).
package publish
