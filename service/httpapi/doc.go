// Package httpapi serves the service's HTTP endpoints: /livez, /readyz,
// /metrics and POST /v1/predict, which scores examples with the model in
// force, under the examples topic's decoder and limits, and learns nothing
// from them.
//
// It asks the service, through the Service interface, whether it is ready
// and to decode and score examples; it knows nothing of Kafka, of the
// roles or of the learner. Serve returns only once the server has shut
// down and every request in flight has been answered.
package httpapi
