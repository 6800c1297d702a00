// Package config is the service's configuration: the keys of
// configs/streamer.yaml as Go types, their loading with viper (the
// defaults from configs/, then a file, STREAMER_* environment variables
// and key=value overrides), their validation, and what each lower layer is
// given of them (pipeline.Config, brokers.Config, a snapshot's settings).
// It is the one place that names the keys: an error about a value names
// the key the user wrote, also when a lower layer found it.
//
// It opens no connection and starts nothing: it knows nothing of the
// service's runtime, of Kafka clients or of HTTP.
package config
