package service

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"streamer/online/drift"
	"streamer/pipeline"
	"streamer/service/consumer"
)

// Metrics are the service's Prometheus metrics, on a registry of its own:
// the consumers' (consumer.Metrics), the HTTP endpoints' (registered by
// package httpapi), and the solver's, the snapshots' and the roles' here.
// The gauges of the model, the window and the prequential scores read the
// pipeline when scraped, so they are right from the start, after a
// restore as after a solve.
type Metrics struct {
	Registry *prometheus.Registry
	*consumer.Metrics
	SolveTime prometheus.Histogram
	Solves    *prometheus.CounterVec
	// AnnounceTime is the time a solve's model took to be announced
	// (versions.go).
	AnnounceTime prometheus.Histogram
	Snapshots    prometheus.Counter
	// ModelEpoch, SnapshotsIgnored, CatchUps and LeaseHeld are the roles'
	// (roles.go).
	ModelEpoch       prometheus.Gauge
	SnapshotsIgnored prometheus.Counter
	CatchUps         prometheus.Counter
	LeaseHeld        prometheus.Gauge
	// DriftEventsLost counts drift alarms not written to the events
	// topic (drift.go).
	DriftEventsLost prometheus.Counter
}

func newMetrics(pipe *pipeline.Pipeline) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := promauto.With(reg)
	m := &Metrics{
		Registry: reg,
		Metrics:  consumer.NewMetrics(reg),
		SolveTime: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamer_solve_duration_seconds",
			Help:    "Wall time of the re-solves that put a new model in force.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 16),
		}),
		Solves: f.NewCounterVec(prometheus.CounterOpts{
			Name: "streamer_solves_total",
			Help: "Re-solves by result: ok (a new model in force), skipped (no labeled example in the window, or labels of fewer than two classes so far), unannounced (the model was dropped: its version could not be written to kafka.topics.versions) or error; a window unchanged since the last solve is not solved and not counted.",
		}, []string{"result"}),
		AnnounceTime: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamer_model_announce_duration_seconds",
			Help:    "Wall time of writing a new model version's announcement to kafka.topics.versions, acknowledged, before the version scores.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		Snapshots: f.NewCounter(prometheus.CounterOpts{
			Name: "streamer_snapshots_published_total",
			Help: "Model snapshots written to the snapshot topic by this process.",
		}),
		ModelEpoch: f.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_model_epoch",
			Help: "Epoch of the model in force (the lease generation of the learner that made it); 0 in role all.",
		}),
		SnapshotsIgnored: f.NewCounter(prometheus.CounterOpts{
			Name: "streamer_snapshots_ignored_total",
			Help: "Snapshots a scorer read and did not put in force because their (epoch, version) was not newer than the model's in force: a fenced learner's late snapshots, or ones read again.",
		}),
		CatchUps: f.NewCounter(prometheus.CounterOpts{
			Name: "streamer_partition_catchups_total",
			Help: "Times a scorer read the snapshot topic up to its end before scoring the first record of a partition in a group generation: a partition assigned to it, or given back to it after a rebalance.",
		}),
		LeaseHeld: f.NewGauge(prometheus.GaugeOpts{
			Name: "streamer_lease_held",
			Help: "1 while this learner holds the lease, else 0.",
		}),
		DriftEventsLost: f.NewCounter(prometheus.CounterOpts{
			Name: "streamer_drift_events_lost_total",
			Help: "Drift alarms whose record was not written to kafka.topics.events: the queue to its writer was full, or the write failed (logged). The alarm itself was counted and reacted to.",
		}),
	}
	registerDrift(f, pipe)
	f.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_labels_joined_total",
		Help: "Labels consumed that met their example: a label arriving after its example (while the example is remembered, join.recent_examples), or before it and waiting (join.pending_labels) until the example arrived.",
	}, func() float64 { return float64(pipe.Stats().Joined) })
	f.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_labels_dropped_total",
		Help: "Labels that waited for their example and were dropped for room (join.pending_labels) before it came: a catch-up whose labels run ahead of its examples by more than join.pending_labels loses them.",
	}, func() float64 { return float64(pipe.Stats().Join.PendingEvictions) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_model_version",
		Help: "Version of the newest model, solved or restored; 0 before the first. It scores unless a version is pinned (streamer_model_pinned_version).",
	}, func() float64 { return float64(pipe.Learner().InForce().Stamp.Version) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_model_pinned_version",
		Help: "Version of the pinned model that scores in place of the newest (streamer model pin); 0 when none is pinned.",
	}, func() float64 { st, _ := pipe.Learner().Pinned(); return float64(st.Version) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_window_examples",
		Help: "Examples in the learner's window now.",
	}, func() float64 { n, _ := pipe.Learner().WindowSize(); return float64(n) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_window_labeled_examples",
		Help: "Labeled examples in the learner's window now.",
	}, func() float64 { _, n := pipe.Learner().WindowSize(); return float64(n) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_prequential_accuracy_ratio",
		Help: "Fraction of the last eval.horizon scored labels whose example's prediction was right (labels of predictions made before any model are not scored); snapshots carry it across restarts. NaN until a label is scored, and on scorers, which read no labels: an alert on a low value does not fire for want of labels.",
	}, func() float64 { recent := pipe.Stats().SSLRecent; return ratio(recent.Correct, recent.Total) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamer_window_kept_ratio",
		Help: "Fraction of the unlabeled examples handed to the learner since start that entered its window (window.sample; labeled examples always do); 1 before any.",
	}, func() float64 { return pipe.Learner().Sampling().KeptFraction() })
	f.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_window_too_old_total",
		Help: "Examples the learner's window refused for an event time more than window.max_age before the newest it had seen (scored all the same): late ones, or those of a partition read behind the others by more than the age.",
	}, func() float64 { return float64(pipe.Learner().TooOldCount()) })
	f.NewCounterFunc(prometheus.CounterOpts{
		Name: "streamer_window_insert_paused_seconds_total",
		Help: "Time the learner paused its window inserts behind a backlog so that they took schedule.insert_share of the time.",
	}, func() float64 { return pipe.Learner().Sampling().Paused.Seconds() })
	registerRequestMetrics(reg, pipe)
	reg.MustRegister(reviewThresholds{pipe: pipe, desc: prometheus.NewDesc("streamer_review_threshold",
		"Calibrated probability from which the predictions of a class are decided without review, by the model that scores now (review.thresholds, or chosen for review.target_precision); +Inf while every prediction of the class goes to review. No series without review routing or before any model.",
		[]string{"class"}, nil)})
	return m
}

// reviewThresholds reports each class's review threshold
// (pipeline.Pipeline.ReviewThresholds) when scraped: the classes are the
// model's, which change as it learns.
type reviewThresholds struct {
	pipe *pipeline.Pipeline
	desc *prometheus.Desc
}

func (r reviewThresholds) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

func (r reviewThresholds) Collect(ch chan<- prometheus.Metric) {
	for class, t := range r.pipe.ReviewThresholds() {
		ch <- prometheus.MustNewConstMetric(r.desc, prometheus.GaugeValue, t, class)
	}
}

// registerDrift registers the drift watch's metrics, per detector; they
// read the pipeline when scraped, and stay 0 for a detector that is off.
func registerDrift(f promauto.Factory, pipe *pipeline.Pipeline) {
	for _, name := range drift.Detectors {
		labels := prometheus.Labels{"detector": name}
		f.NewCounterFunc(prometheus.CounterOpts{
			Name: "streamer_drift_alarms_total", ConstLabels: labels,
			Help: "Drift alarms by detector (drift.detectors), counted across restarts: labels (a rise of the prequential error rate), neighbours (arrivals whose nearest window rows are the newest), scores (a rise of the predictions' uncertainty).",
		}, func() float64 { return float64(driftStatus(pipe, name).Alarms) })
		f.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "streamer_drift_statistic", ConstLabels: labels,
			Help: "A drift detector's statistic now; it alarms when the statistic exceeds streamer_drift_threshold, and starts again from 0.",
		}, func() float64 { return driftStatus(pipe, name).Statistic })
		f.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "streamer_drift_threshold", ConstLabels: labels,
			Help: "The statistic above which a drift detector alarms (drift.labels.threshold, drift.neighbours.threshold, raised where drift.false_alarm_examples asks; scores: ADWIN's cut bound of its window now).",
		}, func() float64 { return driftStatus(pipe, name).Threshold })
	}
}

// ratio is right/total, or NaN when total is 0: the share of nothing,
// which a comparison in an alert never takes for a low value.
func ratio[N int | uint64](right, total N) float64 {
	if total == 0 {
		return math.NaN()
	}
	return float64(right) / float64(total)
}
