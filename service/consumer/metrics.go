package consumer

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"streamer/pipeline"
)

// Metrics are the consumers' Prometheus metrics.
type Metrics struct {
	Consumed  *prometheus.CounterVec
	Published prometheus.Counter
	// Reviews counts the published predictions that were also routed to
	// review: the share decided automatically is 1 - Reviews/Published.
	Reviews     prometheus.Counter
	DeadLetters *prometheus.CounterVec
	// Lag, LastProgress, Stalled, Restarts and Unreachable are the
	// liveness watch's (liveness.go).
	Lag          *prometheus.GaugeVec
	LastProgress *prometheus.GaugeVec
	Stalled      *prometheus.GaugeVec
	Restarts     *prometheus.CounterVec
	Unreachable  prometheus.Gauge
	// LabelsWaits counts the solves that waited for labels (Schedule).
	LabelsWaits *prometheus.CounterVec
	// Retries counts the broker operations retried, the consumers' and
	// the rest of the service's (Retry).
	Retries *prometheus.CounterVec
	// RegistryWaiting and RegistryRetries say how the consumers wait for
	// the schema registry (Consumer.decodeRecord).
	RegistryWaiting prometheus.Gauge
	RegistryRetries prometheus.Counter
}

// NewMetrics registers the consumers' metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		Consumed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_records_consumed_total",
			Help: "Records fetched from the input topics by the consumer, by topic, redeliveries included; records read again to rebuild the window at start are not counted.",
		}, []string{"topic"}),
		Published: f.NewCounter(prometheus.CounterOpts{
			Name: "streamer_predictions_published_total",
			Help: "Predictions written to the predictions topic and acknowledged by the brokers.",
		}),
		Reviews: f.NewCounter(prometheus.CounterOpts{
			Name: "streamer_predictions_reviewed_total",
			Help: "Predictions routed to review (below their class's review threshold), written to the review topic and acknowledged; the share decided automatically is 1 - this / streamer_predictions_published_total.",
		}),
		DeadLetters: f.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_dead_letters_total",
			Help: "Records routed to a dead-letter topic, by input (examples or labels) and reason.",
		}, []string{"topic", "reason"}),
		Lag: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streamer_consumer_lag",
			Help: "Records of an input partition the group has not committed: the brokers' high watermark minus the group's committed offset.",
		}, []string{"topic", "partition"}),
		LastProgress: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streamer_consumer_last_progress_timestamp_seconds",
			Help: "Unix time at which the group's committed offset of an input partition last moved, the partition last had no lag, or the service began to watch it.",
		}, []string{"topic", "partition"}),
		Stalled: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streamer_consumer_stalled",
			Help: "1 while an input partition has lag and no progress for kafka.stall_timeout, else 0.",
		}, []string{"topic", "partition"}),
		Restarts: f.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_consumer_restarts_total",
			Help: "Consumer group readers closed and created again, by reason (stall: a partition stalled).",
		}, []string{"reason"}),
		Unreachable: f.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_liveness_check_failing",
			Help: "1 while the liveness check (the input partitions' offsets, from the brokers) has failed for kafka.stall_timeout: the brokers are unreachable or refuse its requests, and no stall can be seen; else 0.",
		}),
		LabelsWaits: f.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_solve_label_waits_total",
			Help: "Due solves that first waited for label records on the brokers not read yet (a catch-up reading examples ahead of their labels), by how the wait ended: read (every such label read) or timeout (schedule.labels_wait passed).",
		}, []string{"ended"}),
		Retries: f.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_broker_retries_total",
			Help: "Broker operations that failed and were retried, by operation.",
		}, []string{"op"}),
	}
	m.RegistryWaiting = f.NewGauge(prometheus.GaugeOpts{
		Name: "streamer_schema_registry_waiting",
		Help: "1 while the consumer waits for the schema registry: an Avro record whose schema it cannot fetch (the registry is away or fails) is retried, neither refused nor passed over; else 0.",
	})
	m.RegistryRetries = f.NewCounter(prometheus.CounterOpts{
		Name: "streamer_schema_registry_retries_total",
		Help: "Records decoded again because their schema could not be fetched from the schema registry.",
	})
	m.Restarts.WithLabelValues("stall")
	for _, r := range pipeline.RefusalReasons() {
		m.DeadLetters.WithLabelValues("examples", r)
		m.DeadLetters.WithLabelValues("labels", r)
	}
	return m
}
