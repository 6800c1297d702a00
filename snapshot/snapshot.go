package snapshot

import (
	"time"

	"streamer/online/model"
)

// Snapshot is a model with everything needed to score like it and to resume
// the stream where it was taken.
type Snapshot struct {
	// Name is the model's name: the key of its snapshots on the topic.
	Name string `json:"name"`
	// Version numbers the models of an epoch in the order they were made;
	// no two models carry one (Epoch, Version) (Announcement).
	Version uint64 `json:"version"`
	// Epoch is the leadership term of the learner that made the snapshot;
	// 0 in snapshots written alone (role all) and before epochs were kept.
	// (Epoch, Version) orders snapshots: see Stamp.
	Epoch     uint64    `json:"epoch,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// Features are the featurizer settings the weights were learned in.
	Features Features `json:"features"`
	// Params are the solver's hyper-parameters.
	Params Params `json:"params"`
	// Window describes the learner's sliding window.
	Window Window `json:"window"`
	// Model holds the classes and weights. Only each problem's weights and
	// DA temperature are kept: the per-row warm state is rebuilt from the
	// outputs after a restore.
	Model model.Model `json:"-"`
	// Offsets are the stream positions per topic partition.
	Offsets []Offset `json:"offsets,omitempty"`
	Stats   Stats    `json:"stats"`
	// Progress is what a restore continues beside the model; nil in
	// snapshots written before it was kept, and in fit's.
	Progress *Progress `json:"progress,omitempty"`
	// ReviewThresholds are the model's review thresholds, one per class of
	// Model.Classes, chosen for ReviewTargetPrecision (docs/REVIEW.md);
	// both are unset when the model was made without a target precision.
	ReviewThresholds      Thresholds `json:"review_thresholds,omitempty"`
	ReviewTargetPrecision float64    `json:"review_target_precision,omitempty"`
}

// Features are the settings of the featurizer (see ingest.Featurizer).
type Features struct {
	Dim       int  `json:"dim"`
	DenseDim  int  `json:"dense_dim,omitempty"`
	Signed    bool `json:"signed,omitempty"`
	Normalize bool `json:"normalize,omitempty"`
}

// Params are the solver's hyper-parameters (see train.Params), under
// the keys of the configuration's solver section.
type Params struct {
	Algorithm    string  `json:"algorithm"`
	Lambda       float64 `json:"lambda"`
	LambdaU      float64 `json:"lambda_u,omitempty"`
	LambdaI      float64 `json:"lambda_i,omitempty"`
	R            float64 `json:"r,omitempty"`
	MaxSwitch    int     `json:"max_switch,omitempty"`
	PositiveCost float64 `json:"cost_pos,omitempty"`
	NegativeCost float64 `json:"cost_neg,omitempty"`
	SRDelta      float64 `json:"sr_delta,omitempty"`
	SRGamma      float64 `json:"sr_gamma,omitempty"`
	SRNeighbours int     `json:"sr_k,omitempty"`
}

// Window describes the sliding window and its graph.
type Window struct {
	MaxExamples int           `json:"max_examples,omitempty"`
	MaxAge      time.Duration `json:"max_age,omitempty"`
	K           int           `json:"k,omitempty"`
	Laplacian   string        `json:"laplacian,omitempty"`
	Degree      int           `json:"degree,omitempty"`
	Weights     string        `json:"weights,omitempty"`
}

// Offset is the stream position of one topic partition: WindowStart is the
// offset of the oldest record the window (or a pending label) needs, Next
// the offset after the last record consumed.
type Offset struct {
	Topic       string `json:"topic"`
	Partition   int    `json:"partition"`
	WindowStart int64  `json:"window_start"`
	Next        int64  `json:"next"`
}

// Stats are counters of the stream up to the snapshot (Examples, Labels,
// Predictions and Solves, carried over restarts and from one learner to
// the next) and the window the model was solved on (WindowSize, Labeled,
// Objective).
type Stats struct {
	Examples    int64   `json:"examples"`
	Labels      int64   `json:"labels"`
	Predictions int64   `json:"predictions"`
	Solves      int64   `json:"solves"`
	WindowSize  int     `json:"window_size"`
	Labeled     int     `json:"labeled"`
	Objective   float64 `json:"objective"`
	Accuracy    float64 `json:"accuracy,omitempty"`
}

// SolvedOn returns the window the snapshot's model was solved on.
func (s *Snapshot) SolvedOn() model.SolvedOn {
	return model.SolvedOn{Window: s.Stats.WindowSize, Labeled: s.Stats.Labeled, Objective: s.Stats.Objective}
}

// Progress is the state of the stream's evaluation at the snapshot: the
// prequential scores of the model, and of the supervised baseline when it
// runs, and whether the model had been solved on the window as it was (a
// restore that rebuilds that window then skips solving it again).
type Progress struct {
	Solved      bool         `json:"solved"`
	Prequential Prequential  `json:"prequential"`
	Baseline    *Prequential `json:"baseline,omitempty"`
	// Unlabeled are the ids of window rows whose labels a drift alarm
	// made the learner forget: a restore, which reads the labels again,
	// forgets them again.
	Unlabeled []string `json:"unlabeled,omitempty"`
	// ReviewGrades are the graded predictions the next solves choose
	// their review thresholds on; nil without a target precision.
	ReviewGrades *Grades `json:"review_grades,omitempty"`
	// Drift is what the drift watch takes up at a restore; nil when it
	// is off or has nothing to keep.
	Drift *DriftWatch `json:"drift,omitempty"`
}

// check verifies the review grades and the drift watch a progress holds.
func (p *Progress) check() error {
	if p == nil {
		return nil
	}
	if err := p.ReviewGrades.check(); err != nil {
		return err
	}
	return p.Drift.check()
}

// Prequential is the state of a stream's prequential scores, what
// pipeline.Prequential.State gives and Resume takes back: the one type of
// it, which the pipeline's Progress holds and a snapshot keeps as it is.
// It lives here, in the lower layer, and pipeline imports it: snapshot
// must not import pipeline, or brokers, which reads snapshots, would take
// in the decoder and the core loop with it.
type Prequential struct {
	Correct int `json:"correct"`
	Total   int `json:"total"`
	// Per class over the whole stream, for macro-F1.
	TruePositives  map[string]int `json:"true_positives,omitempty"`
	FalsePositives map[string]int `json:"false_positives,omitempty"`
	FalseNegatives map[string]int `json:"false_negatives,omitempty"`
	// Recent holds the last scored (prediction, label) pairs, oldest first.
	Recent   [][2]string  `json:"recent,omitempty"`
	Unscored int          `json:"unscored,omitempty"`
	Curve    []CurvePoint `json:"curve,omitempty"`
	Examples int          `json:"examples"` // examples seen, the curve's x
}

// CurvePoint is a point of a prequential curve: the scores after Labels
// scored labels and Examples examples. It lives here with Prequential.
type CurvePoint struct {
	Labels         int     `json:"labels"`
	Examples       int     `json:"examples"`
	Accuracy       float64 `json:"accuracy"`
	RecentAccuracy float64 `json:"recent_accuracy"`
}
