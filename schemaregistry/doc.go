// Package schemaregistry is the client of a schema registry of
// Confluent's REST API (franz-go's pkg/sr): it fetches the Avro schemas
// that records in the wire format name by id, parses them once and keeps
// them in a bounded cache, and registers the schema of a subject. It
// implements ingest.SchemaSource.
//
// It knows nothing of Kafka, of what the schemas describe, nor of how
// long to wait for a registry that is away: its caller retries.
package schemaregistry
