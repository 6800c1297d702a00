package service

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"streamer/ingest"
)

// Metrics are the service's Prometheus metrics, on a registry of its own.
type Metrics struct {
	Registry    *prometheus.Registry
	Consumed    *prometheus.CounterVec
	Published   prometheus.Counter
	Joined      prometheus.Counter
	DeadLetters *prometheus.CounterVec
	Lag         *prometheus.GaugeVec
	// LastProgress, Stalled and Restarts are the per-partition liveness
	// (liveness.go).
	LastProgress *prometheus.GaugeVec
	Stalled      *prometheus.GaugeVec
	Restarts     *prometheus.CounterVec
	SolveTime    prometheus.Histogram
	Solves       *prometheus.CounterVec
	Version      prometheus.Gauge
	Window       prometheus.Gauge
	Labeled      prometheus.Gauge
	Snapshots    prometheus.Counter
	Accuracy     prometheus.Gauge
	Retries      *prometheus.CounterVec
}

func newMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Consumed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_records_consumed_total", Help: "Records read from the input topics.",
		}, []string{"topic"}),
		Published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_predictions_published_total", Help: "Predictions acknowledged by the brokers.",
		}),
		Joined: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_labels_joined_total", Help: "Labels that found their example (late or early).",
		}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_dead_letters_total", Help: "Records sent to a dead-letter topic, by reason.",
		}, []string{"topic", "reason"}),
		Lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streamer_consumer_lag",
			Help: "Records of an input partition the group has not committed: the brokers' high watermark minus the group's committed offset.",
		}, []string{"topic", "partition"}),
		LastProgress: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streamer_consumer_last_progress_timestamp_seconds",
			Help: "Unix time at which the group's committed offset of an input partition last moved, the partition last had no lag, or the service began to watch it.",
		}, []string{"topic", "partition"}),
		Stalled: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streamer_consumer_stalled",
			Help: "1 while an input partition has lag and no progress for kafka.stall_timeout, else 0.",
		}, []string{"topic", "partition"}),
		Restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_consumer_restarts_total",
			Help: "Consumer group readers closed and created again, by reason (stall: a partition stalled).",
		}, []string{"reason"}),
		SolveTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "streamer_solve_duration_seconds", Help: "Wall time of re-solves.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 16),
		}),
		Solves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_solves_total", Help: "Re-solves by result: ok, skipped (nothing to learn yet) or error.",
		}, []string{"result"}),
		Version: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_model_version", Help: "Version of the model in force.",
		}),
		Window: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_window_examples", Help: "Examples in the learner's window.",
		}),
		Labeled: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_window_labeled_examples", Help: "Labeled examples in the learner's window.",
		}),
		Snapshots: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_snapshots_published_total", Help: "Model snapshots published.",
		}),
		Accuracy: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_prequential_accuracy_ratio", Help: "Prequential accuracy over the recent horizon of labels.",
		}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_broker_retries_total", Help: "Broker operations retried after an error, by operation.",
		}, []string{"op"}),
	}
	m.Registry.MustRegister(m.Consumed, m.Published, m.Joined, m.DeadLetters, m.Lag, m.LastProgress, m.Stalled, m.Restarts, m.SolveTime, m.Solves,
		m.Version, m.Window, m.Labeled, m.Snapshots, m.Accuracy, m.Retries,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Restarts.WithLabelValues("stall")
	for _, r := range append(ingest.Reasons(), "incompatible_vector", "rejected") {
		m.DeadLetters.WithLabelValues("examples", string(r))
		m.DeadLetters.WithLabelValues("labels", string(r))
	}
	return m
}
