package service

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"streamer/ingest"
	"streamer/pipeline"
)

// Metrics are the service's Prometheus metrics, on a registry of its own.
// The gauges of the model, the window and the prequential scores read the
// pipeline when scraped, so they are right from the start, after a
// restore as after a solve.
type Metrics struct {
	Registry    *prometheus.Registry
	Consumed    *prometheus.CounterVec
	Published   prometheus.Counter
	DeadLetters *prometheus.CounterVec
	Lag         *prometheus.GaugeVec
	// LastProgress, Stalled and Restarts are the per-partition liveness,
	// Unreachable the brokers' (liveness.go).
	LastProgress *prometheus.GaugeVec
	Stalled      *prometheus.GaugeVec
	Restarts     *prometheus.CounterVec
	Unreachable  prometheus.Gauge
	SolveTime    prometheus.Histogram
	Solves       *prometheus.CounterVec
	LabelsWaits  *prometheus.CounterVec
	Snapshots    prometheus.Counter
	Retries      *prometheus.CounterVec
	// PredictRequests, PredictExamples and PredictTime measure POST
	// /v1/predict (predict.go).
	PredictRequests *prometheus.CounterVec
	PredictExamples prometheus.Counter
	PredictTime     prometheus.Histogram
	// ModelEpoch, SnapshotsIgnored, CatchUps and LeaseHeld are the roles'
	// (roles.go).
	ModelEpoch       prometheus.Gauge
	SnapshotsIgnored prometheus.Counter
	CatchUps         prometheus.Counter
	LeaseHeld        prometheus.Gauge
}

func newMetrics(pipe *pipeline.Pipeline) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Consumed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_records_consumed_total",
			Help: "Records fetched from the input topics by the consumer, by topic, redeliveries included; records read again to rebuild the window at start are not counted.",
		}, []string{"topic"}),
		Published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_predictions_published_total",
			Help: "Predictions written to the predictions topic and acknowledged by the brokers.",
		}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_dead_letters_total",
			Help: "Records routed to a dead-letter topic, by input (examples or labels) and reason.",
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
		Unreachable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_liveness_check_failing",
			Help: "1 while the liveness check (the input partitions' offsets, from the brokers) has failed for kafka.stall_timeout: the brokers are unreachable or refuse its requests, and no stall can be seen; else 0.",
		}),
		SolveTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamer_solve_duration_seconds",
			Help:    "Wall time of the re-solves that put a new model in force.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 16),
		}),
		Solves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_solves_total",
			Help: "Re-solves by result: ok (a new model in force), skipped (no labeled example in the window, or labels of fewer than two classes so far) or error; a window unchanged since the last solve is not solved and not counted.",
		}, []string{"result"}),
		LabelsWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_solve_label_waits_total",
			Help: "Due solves that first waited for label records on the brokers not read yet (a catch-up reading examples ahead of their labels), by how the wait ended: read (every such label read) or timeout (schedule.labels_wait passed).",
		}, []string{"ended"}),
		Snapshots: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_snapshots_published_total",
			Help: "Model snapshots written to the snapshot topic by this process.",
		}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_broker_retries_total",
			Help: "Broker operations that failed and were retried, by operation.",
		}, []string{"op"}),
		PredictRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_http_predict_requests_total",
			Help: "Requests to /v1/predict, by HTTP status (400 and 413: bad input; 503: no model yet).",
		}, []string{"code"}),
		PredictExamples: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_http_predicted_examples_total",
			Help: "Examples scored for /v1/predict requests answered 200; none of them is learned from.",
		}),
		PredictTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamer_http_predict_duration_seconds",
			Help:    "Wall time of /v1/predict requests, from the request's headers to the answer written, body read included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}),
		ModelEpoch: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_model_epoch",
			Help: "Epoch of the model in force (the lease generation of the learner that made it); 0 in role all.",
		}),
		SnapshotsIgnored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_snapshots_ignored_total",
			Help: "Snapshots a scorer read and did not put in force because their (epoch, version) was not newer than the model's in force: a fenced learner's late snapshots, or ones read again.",
		}),
		CatchUps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamer_partition_catchups_total",
			Help: "Times a scorer read the snapshot topic up to its end before scoring the first record of a partition in a group generation: a partition assigned to it, or given back to it after a rebalance.",
		}),
		LeaseHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_lease_held",
			Help: "1 while this learner holds the lease, else 0.",
		}),
	}
	joined := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_labels_joined_total",
		Help: "Labels consumed that met their example: a label arriving after its example (while the example is remembered, join.recent_examples), or before it and waiting (join.pending_labels) until the example arrived.",
	}, func() float64 { return float64(pipe.Stats().Joined) })
	dropped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_labels_dropped_total",
		Help: "Labels that waited for their example and were dropped for room (join.pending_labels) before it came: a catch-up whose labels run ahead of its examples by more than join.pending_labels loses them.",
	}, func() float64 { return float64(pipe.Stats().Join.PendingEvictions) })
	version := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_model_version", Help: "Version of the newest model, solved or restored; 0 before the first. It scores unless a version is pinned (streamer_model_pinned_version).",
	}, func() float64 { return float64(pipe.Learner().InForce().Stamp.Version) })
	pinned := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_model_pinned_version", Help: "Version of the pinned model that scores in place of the newest (streamer model pin); 0 when none is pinned.",
	}, func() float64 { st, _ := pipe.Learner().Pinned(); return float64(st.Version) })
	window := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_window_examples", Help: "Examples in the learner's window now.",
	}, func() float64 { n, _ := pipe.Learner().WindowSize(); return float64(n) })
	labeled := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_window_labeled_examples", Help: "Labeled examples in the learner's window now.",
	}, func() float64 { _, n := pipe.Learner().WindowSize(); return float64(n) })
	accuracy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_prequential_accuracy_ratio",
		Help: "Fraction of the last eval.horizon scored labels whose example's prediction was right (labels of predictions made before any model are not scored); snapshots carry it across restarts.",
	}, func() float64 { return pipe.Stats().SSLRecent.Accuracy() })
	kept := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_window_kept_ratio",
		Help: "Fraction of the unlabeled examples handed to the learner since start that entered its window (window.sample; labeled examples always do); 1 before any.",
	}, func() float64 { return pipe.Learner().Sampling().KeptFraction() })
	tooOld := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_window_too_old_total",
		Help: "Examples the learner's window refused for an event time more than window.max_age before the newest it had seen (scored all the same): late ones, or those of a partition read behind the others by more than the age.",
	}, func() float64 { return float64(pipe.Learner().TooOldCount()) })
	paused := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_window_insert_paused_seconds_total",
		Help: "Time the learner paused its window inserts behind a backlog so that they took schedule.insert_share of the time.",
	}, func() float64 { return pipe.Learner().Sampling().Paused.Seconds() })
	m.Registry.MustRegister(m.Consumed, m.Published, joined, dropped, m.DeadLetters, m.Lag, m.LastProgress, m.Stalled, m.Restarts, m.Unreachable, m.SolveTime, m.Solves, m.LabelsWaits,
		version, pinned, window, labeled, kept, tooOld, paused, m.Snapshots, accuracy, m.Retries, m.PredictRequests, m.PredictExamples, m.PredictTime,
		m.ModelEpoch, m.SnapshotsIgnored, m.CatchUps, m.LeaseHeld,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Restarts.WithLabelValues("stall")
	for _, r := range append(ingest.Reasons(), "incompatible_vector", "rejected") {
		m.DeadLetters.WithLabelValues("examples", string(r))
		m.DeadLetters.WithLabelValues("labels", string(r))
	}
	return m
}
