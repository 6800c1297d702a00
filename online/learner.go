package online

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"streamer/anngraph"
	"streamer/vector"
)

// LearnerConfig describes a Learner. Zero fields mean the defaults written
// beside them.
type LearnerConfig struct {
	// Features is the size of the weight space: the hashed feature space,
	// or the length of dense vectors.
	Features int
	// Window bounds the window by count and age and sets up its kNN graph.
	Window anngraph.Config
	// Graph says how the Laplacian is built from the kNN graph.
	Graph anngraph.LaplacianConfig
	// Params are the solver's hyper-parameters.
	Params Params
	// A re-solve is due after SolveExamples new examples or SolveLabels
	// new labels since the last one; 0 means 1000 and 20.
	SolveExamples int
	SolveLabels   int
}

func (c LearnerConfig) withDefaults() LearnerConfig {
	if c.SolveExamples <= 0 {
		c.SolveExamples = 1000
	}
	if c.SolveLabels <= 0 {
		c.SolveLabels = 20
	}
	c.Params = c.Params.withDefaults()
	return c
}

// Validate names the first bad field.
func (c LearnerConfig) Validate() error {
	if c.Features <= 0 {
		return fmt.Errorf("features must be > 0, got %d", c.Features)
	}
	if err := c.Window.Validate(); err != nil {
		return fmt.Errorf("window: %w", err)
	}
	if err := c.Params.withDefaults().Validate(); err != nil {
		return fmt.Errorf("solver: %w", err)
	}
	return nil
}

// Learner is the streaming learner: a sliding window of examples, the
// labels known for them, and the model in force. Scoring reads the model
// without locks; Observe and Label take a short lock; Solve takes a frozen
// view of the window and solves beside them, then swaps the new model in
// atomically. It is safe for concurrent use.
type Learner struct {
	cfg LearnerConfig

	mu            sync.Mutex // guards the fields below
	window        rowWindow
	keyOf         map[string]uint64
	idOf          map[uint64]string
	labels        map[uint64]string
	nextKey       uint64
	sinceExamples int
	sinceLabels   int
	changed       bool
	kind          vectorKind // of the first vector observed; the window holds one kind

	solving sync.Mutex // one solve at a time
	current atomic.Pointer[versionedModel]
}

type versionedModel struct {
	model   *Model
	version uint64
}

// NewLearner returns a Learner with an empty window and no model.
func NewLearner(cfg LearnerConfig) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	l := &Learner{cfg: cfg, keyOf: map[string]uint64{}, idOf: map[uint64]string{}, labels: map[uint64]string{}}
	if cfg.Params.Algorithm.usesGraph(cfg.Params.LambdaI) {
		w, err := anngraph.New(cfg.Window)
		if err != nil {
			return nil, err
		}
		l.window = graphWindow{w}
	} else {
		l.window = newPlainWindow(cfg.Window.MaxExamples, cfg.Window.MaxAge)
	}
	return l, nil
}

// Observe adds an example to the window, with its label when it came with
// one (label "" otherwise). It returns the ids the window evicted to make
// room, oldest first; an example too old for the window by age is evicted
// at once and returned itself. An id already in the window is a
// redelivery: it is not added twice, and only a new label is taken.
func (l *Learner) Observe(id string, ts time.Time, v vector.Vector, label string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if key, ok := l.keyOf[id]; ok {
		if label != "" {
			l.setLabel(key, label)
		}
		return nil, nil
	}
	if err := l.checkKind(v); err != nil {
		return nil, fmt.Errorf("observe %q: %w", id, err)
	}
	key := l.nextKey
	evictedKeys, err := l.window.Insert(key, ts, v)
	if err != nil {
		return nil, fmt.Errorf("observe %q: %w", id, err)
	}
	l.nextKey++
	l.keyOf[id], l.idOf[key] = key, id
	if label != "" {
		l.labels[key] = label
		l.sinceLabels++
	}
	l.sinceExamples++
	l.changed = true
	evicted := make([]string, 0, len(evictedKeys))
	for _, k := range evictedKeys {
		evicted = append(evicted, l.idOf[k])
		delete(l.keyOf, l.idOf[k])
		delete(l.idOf, k)
		delete(l.labels, k)
	}
	return evicted, nil
}

// vectorKind is sparse, or dense of one length.
type vectorKind struct {
	set      bool
	dense    bool
	denseLen int
}

// ErrIncompatible is returned for a vector that the window cannot hold
// with the others: sparse and dense mixed, dense of another length, or an
// index beyond the feature space.
var ErrIncompatible = errors.New("vector incompatible with the window")

// checkKind keeps the window to one kind of vector in the feature space.
func (l *Learner) checkKind(v vector.Vector) error {
	switch {
	case v.IsDense() && len(v.Values) > l.cfg.Features:
		return fmt.Errorf("%w: dense vector of %d values in a space of %d", ErrIncompatible, len(v.Values), l.cfg.Features)
	case !v.IsDense() && len(v.Indices) > 0 && int(v.Indices[len(v.Indices)-1]) >= l.cfg.Features:
		return fmt.Errorf("%w: index %d beyond the feature space of %d", ErrIncompatible, v.Indices[len(v.Indices)-1], l.cfg.Features)
	case !l.kind.set:
		l.kind = vectorKind{set: true, dense: v.IsDense(), denseLen: len(v.Values)}
	case l.kind.dense != v.IsDense():
		return fmt.Errorf("%w: a %s vector among %s ones", ErrIncompatible, kindName(v.IsDense()), kindName(l.kind.dense))
	case l.kind.dense && len(v.Values) != l.kind.denseLen:
		return fmt.Errorf("%w: dense vector of %d values among vectors of %d", ErrIncompatible, len(v.Values), l.kind.denseLen)
	}
	return nil
}

func kindName(dense bool) string {
	if dense {
		return "dense"
	}
	return "sparse"
}

// Label sets the label of an example in the window and reports whether it
// is there.
func (l *Learner) Label(id, class string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key, ok := l.keyOf[id]
	if ok {
		l.setLabel(key, class)
	}
	return ok
}

func (l *Learner) setLabel(key uint64, class string) {
	if l.labels[key] == class {
		return
	}
	l.labels[key] = class
	l.sinceLabels++
	l.changed = true
}

// Contains reports whether example id is in the window.
func (l *Learner) Contains(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.keyOf[id]
	return ok
}

// WindowSize returns the number of examples in the window and how many of
// them are labeled.
func (l *Learner) WindowSize() (examples, labeled int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.window.Len(), len(l.labels)
}

// Due reports whether enough examples or labels arrived for a re-solve.
func (l *Learner) Due() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sinceExamples >= l.cfg.SolveExamples || l.sinceLabels >= l.cfg.SolveLabels
}

// Changed reports whether the model in force may not be the solution of
// the window as it is: the window or its labels changed since the last
// solve began, or a solve is running.
func (l *Learner) Changed() bool {
	if !l.solving.TryLock() {
		return true
	}
	defer l.solving.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// MarkSolved records that the model in force was solved on the window as it
// is now, such as a restored model on the window rebuilt as it was at its
// snapshot: the next Solve waits for a change.
func (l *Learner) MarkSolved() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changed, l.sinceExamples, l.sinceLabels = false, 0, 0
}

// Model returns the model in force and its version; nil and 0 before the
// first solve or restore.
func (l *Learner) Model() (*Model, uint64) {
	if v := l.current.Load(); v != nil {
		return v.model, v.version
	}
	return nil, 0
}

// SetModel puts a model in force, such as one restored from a snapshot.
func (l *Learner) SetModel(m *Model, version uint64) {
	l.current.Store(&versionedModel{model: m, version: version})
}

// Predict scores v with the model in force. It returns false while there
// is no model.
func (l *Learner) Predict(v vector.Vector) (Prediction, *Model, uint64, bool) {
	m, version := l.Model()
	if !m.Ready() {
		return Prediction{}, nil, version, false
	}
	return m.Predict(v), m, version, true
}

// SolveReport describes a re-solve.
type SolveReport struct {
	Version uint64 // the version of the new model
	Window  int    // examples in the window
	Labeled int    // of which labeled
	TrainStats
}

// ErrUnchanged is returned by Solve when nothing changed since the last
// solve: the solve is skipped.
var ErrUnchanged = errors.New("window unchanged since the last solve")

// Solve re-solves the model over the window, warm-started from the model in
// force, and puts the new model in force. It returns ErrUnchanged when the
// window and its labels did not change, and ErrOneClass while the labels
// name fewer than two classes. Examples and labels may arrive meanwhile;
// they count toward the next solve.
func (l *Learner) Solve(ctx context.Context) (SolveReport, error) {
	l.solving.Lock()
	defer l.solving.Unlock()
	view, labels, ok := l.freeze()
	if !ok {
		return SolveReport{}, ErrUnchanged
	}
	rep, err := l.train(ctx, view, labels)
	if err != nil && !errors.Is(err, ErrOneClass) && !errors.Is(err, ErrNoLabels) {
		l.mu.Lock()
		l.changed = true // let the next trigger try again
		l.mu.Unlock()
	}
	return rep, err
}

// freeze takes the view and labels a solve works on and resets the
// triggers.
func (l *Learner) freeze() (windowView, []string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.changed {
		return windowView{}, nil, false
	}
	view := l.window.snapshot()
	labels := make([]string, len(view.keys))
	for i, k := range view.keys {
		labels[i] = l.labels[k]
	}
	l.changed, l.sinceExamples, l.sinceLabels = false, 0, 0
	return view, labels, true
}

func (l *Learner) train(ctx context.Context, view windowView, labels []string) (SolveReport, error) {
	rep := SolveReport{Window: len(view.keys)}
	for _, c := range labels {
		if c != "" {
			rep.Labeled++
		}
	}
	lap, err := view.laplacian(l.cfg.Graph)
	if err != nil {
		return rep, err
	}
	prev, version := l.Model()
	data := TrainData{X: NewMatrix(view.vecs, l.cfg.Features), Labels: labels, Keys: view.keys, Laplacian: lap}
	m, st, err := Train(ctx, data, l.cfg.Params, prev)
	if err != nil {
		return rep, err
	}
	rep.TrainStats, rep.Version = st, version+1
	l.SetModel(m, rep.Version)
	return rep, nil
}
