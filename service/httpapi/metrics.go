package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics measure POST /v1/predict.
type metrics struct {
	requests *prometheus.CounterVec
	examples prometheus.Counter
	seconds  prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) metrics {
	f := promauto.With(reg)
	return metrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_http_predict_requests_total",
			Help: "Requests to /v1/predict, by HTTP status (400 and 413: bad input; 503: no model yet).",
		}, []string{"code"}),
		examples: f.NewCounter(prometheus.CounterOpts{
			Name: "streamer_http_predicted_examples_total",
			Help: "Examples scored for /v1/predict requests answered 200; none of them is learned from.",
		}),
		seconds: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamer_http_predict_duration_seconds",
			Help:    "Wall time of /v1/predict requests, from the request's headers to the answer written, body read included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}),
	}
}
