package online

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"streamer/anngraph"
	"streamer/internal/ring"
	"streamer/online/active"
	"streamer/online/kernel"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/online/newton"
	"streamer/online/propagate"
	"streamer/online/review"
	"streamer/online/train"
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
	// Graph says how the Laplacian is built from the kNN graph; a Degree
	// of 0 means GraphDegree's choice for the algorithm.
	Graph anngraph.LaplacianConfig
	// Params are the solver's hyper-parameters.
	Params train.Params
	// Queue bounds the hand-off of examples from Observe to Run's
	// goroutine, which inserts them into the window; 0 means 20000.
	Queue int
	// Sample is the fraction of unlabeled examples the window takes while
	// Run runs, chosen by a hash of the id; 0 means all that the hand-off
	// queue has room for ("auto").
	Sample float64
	// Kernel, when enabled, maps the window's rows by a Nyström kernel
	// map whose landmarks are drawn from the window at the first solve;
	// the kNN graph stays on the input vectors.
	Kernel kernel.Config
	// A re-solve is due after SolveExamples new examples or SolveLabels
	// new labels since the last one, and sooner while the window is small
	// or holds few labels: after a tenth of the examples it holds (at
	// least earlyExamples) or a tenth of its labels (at least one). A
	// model is worth most while its first labels arrive, and a small
	// window solves fast. 0 means 1000 and 20.
	SolveExamples int
	SolveLabels   int
	// Vote blends the model with the vote of an example's nearest window
	// rows.
	Vote VoteConfig
	// KeepView keeps the kNN graph of the window of each solve with the
	// model (Solved.View) until the next, so that an arrival's nearest
	// rows can be searched when the vote does not search them (the drift
	// detector of package pipeline).
	KeepView bool
	// BatchInline, while Run is not running, makes Observe collect the
	// rows of a kNN graph window and insert them by batches of 64
	// (anngraph.Window.InsertBatch, on Window.InsertWorkers cores)
	// instead of one by one. What reads the window (Solve, WindowSize,
	// Run) inserts the rows collected first, so that a stream observed
	// again gives the same window, whatever the cores: eval, replay and
	// a restore's rebuild stay deterministic. Observe then returns no
	// evicted ids for such rows.
	BatchInline bool
	// Requests has each solve leave a pool of the window's rows, with the
	// new model's distributions, for label requests (RequestPool).
	Requests bool
	// Review, when its TargetPrecision is set, has each solve choose the
	// review thresholds published with its model (Solved.Thresholds).
	Review ReviewConfig
}

// ReviewConfig says how a solve chooses the review thresholds of its
// model: per class, the lowest calibrated probability at which the
// graded predictions (Grade) reach TargetPrecision (package review).
type ReviewConfig struct {
	// TargetPrecision is the precision the predictions decided without
	// review should reach; 0 chooses no thresholds.
	TargetPrecision float64
	// Grades is how many of the most recent graded predictions the choice
	// is made on; 0 means 5000.
	Grades int
}

// DefaultReviewGrades is ReviewConfig.Grades when it is 0.
const DefaultReviewGrades = 5000

// Validate names the first bad field.
func (c ReviewConfig) Validate() error {
	switch {
	case c.TargetPrecision < 0 || c.TargetPrecision >= 1:
		return fmt.Errorf("target_precision must be in [0, 1), got %v", c.TargetPrecision)
	case c.Grades < 0:
		return fmt.Errorf("grades must be >= 0, got %d", c.Grades)
	}
	return nil
}

func (c LearnerConfig) withDefaults() LearnerConfig {
	if c.SolveExamples <= 0 {
		c.SolveExamples = 1000
	}
	if c.SolveLabels <= 0 {
		c.SolveLabels = 20
	}
	if c.Queue <= 0 {
		c.Queue = 20000
	}
	c.Params = c.Params.WithDefaults()
	c.Graph.Degree = train.GraphDegree(c.Params.Algorithm, c.Graph.Degree)
	c.Vote = c.Vote.withDefaults()
	if c.Review.Grades == 0 {
		c.Review.Grades = DefaultReviewGrades
	}
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
	if err := c.Params.WithDefaults().Validate(); err != nil {
		return fmt.Errorf("solver: %w", err)
	}
	if err := c.Kernel.Validate(); err != nil {
		return fmt.Errorf("features: %w", err)
	}
	if c.Queue < 0 || c.Sample < 0 || c.Sample > 1 {
		return fmt.Errorf("window: queue must be >= 0 and sample in [0, 1], got %d and %v", c.Queue, c.Sample)
	}
	if err := c.Vote.Validate(); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	if err := c.Review.Validate(); err != nil {
		return fmt.Errorf("review: %w", err)
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

	mu            sync.Mutex // guards the fields below, but window (winMu)
	winMu         sync.Mutex // guards window; taken after mu, never before
	window        rowWindow
	tooOldBefore  uint64   // rows refused as too old by windows replaced (winMu)
	handoff       *handoff // set while Run runs
	sampled       sampleCounts
	keyOf         map[string]uint64
	idOf          map[uint64]string
	labels        map[uint64]string
	nextKey       uint64
	sinceExamples int
	sinceLabels   int
	changed       bool
	// landedDue is signalled when rows landing from the hand-off make a
	// solve due (LandedDue).
	landedDue chan struct{}
	// graphed is set once the window is a kNN graph: Run paces only its
	// inserts, a plain window's costing next to nothing.
	graphed atomic.Bool
	// classes holds every class labeled so far; with auto, the window
	// grows its kNN graph once it holds three.
	classes map[string]bool
	// chosen holds the labeled rows whose labels answered requests chosen
	// for what they would teach (Chosen).
	chosen map[uint64]bool
	// unlabeled holds the window rows whose labels a forget took or
	// refused (Unlabeled): a restore takes them again (Unlabel).
	unlabeled map[uint64]bool
	// batch is Run's scratch for a batch of rows it inserts.
	batch []insertion
	// tookHook, set by tests before Run starts, is told each batch Run
	// took from the queue, before it waits for the window.
	tookHook func(rows int)
	// pending holds the rows observed inline and not inserted yet
	// (LearnerConfig.BatchInline); guarded by mu.
	pending []insertion
	// reaction is what drift made of the schedule and the window
	// (forget.go); guarded by mu.
	reaction reaction
	// grades holds the most recent ReviewConfig.Grades graded
	// predictions (Grade); guarded by mu.
	grades ring.Ring[review.Grade]

	solving sync.Mutex // one solve at a time
	mapped  mappedRows // guarded by solving
	current atomic.Pointer[Solved]
	// pinned, when set, scores in place of current (Pin): solves go on
	// from current and put their models in force, which score again at
	// Unpin.
	pinned atomic.Pointer[Solved]
	// epoch stamps the models Solve makes (SetEpoch).
	epoch atomic.Uint64
	// issued is the highest version a solve took, or that SetModel or
	// ReserveVersions put out of its reach: the next solve takes the one
	// after it, announced or not.
	issued atomic.Uint64
	// announce, when set (SetAnnouncer), is told of each model a solve
	// makes before the model is put in force.
	announce atomic.Pointer[Announcer]
	// pool is the newest solve's pool for label requests
	// (LearnerConfig.Requests).
	pool atomic.Pointer[active.Pool]
	// kind is that of the first vector observed, nil before: the window
	// holds one kind. It is set once, under mu, and read without it by
	// Compatible.
	kind atomic.Pointer[vectorKind]
}

// Solved is a model as the learner holds it: the model, its stamp and the
// window it was solved on, read together.
type Solved struct {
	Model    *model.Model // nil before the first solve or restore
	Stamp    model.Stamp
	SolvedOn model.SolvedOn
	// Algorithm is the algorithm the solve ran (auto's choice); empty for
	// a restored or pinned model.
	Algorithm train.Algorithm
	// Vote, set by a solve over a kNN graph that follows the labels, is
	// the vote of an example's nearest rows of the window solved on,
	// which Predict blends with the model's probabilities, VoteWeight
	// the vote's share. A restored or pinned model has none.
	Vote       *propagate.Vote
	VoteWeight float64
	// View is the kNN graph of the window solved on, kept when
	// LearnerConfig.KeepView is set, for Score's searches; nil without a
	// graph.
	View *anngraph.View
	// Neighbours, set by a solve over a kNN graph, holds the window's
	// labeled rows, for explanations.
	Neighbours *Neighbourhood
	// Thresholds, set by a solve with ReviewConfig.TargetPrecision, holds
	// each class's review threshold (review.Thresholds): a prediction of
	// that class with a lower probability is for review. ThresholdsTarget
	// is the target precision they were chosen for: a model restored from
	// a snapshot carries those it was published with, which hold only
	// for that target.
	Thresholds       []float64
	ThresholdsTarget float64
}

// NewLearner returns a Learner with an empty window and no model.
func NewLearner(cfg LearnerConfig) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	l := &Learner{
		cfg: cfg, keyOf: map[string]uint64{}, idOf: map[uint64]string{}, labels: map[uint64]string{}, chosen: map[uint64]bool{}, unlabeled: map[uint64]bool{}, classes: map[string]bool{},
		landedDue: make(chan struct{}, 1), grades: ring.New[review.Grade](cfg.Review.Grades),
	}
	if cfg.Params.Algorithm.UsesGraph(cfg.Params.LambdaI) {
		w, err := anngraph.New(cfg.Window)
		if err != nil {
			return nil, err
		}
		l.window = graphWindow{w}
		l.graphed.Store(true)
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
//
// While Run runs, the window's insertion (the kNN graph's, the costly part)
// is handed to Run's goroutine through a bounded queue, and Observe returns
// no evicted ids: a labeled example waits for room in the queue, an
// unlabeled one is dropped when the queue is full (or, with
// LearnerConfig.Sample, kept at that fraction). The example is in the
// window's bookkeeping (Contains, Label) as soon as Observe returns.
func (l *Learner) Observe(id string, ts time.Time, v vector.Vector, label string) ([]string, error) {
	l.mu.Lock()
	if key, ok := l.keyOf[id]; ok {
		if label != "" {
			l.setLabel(key, label)
		}
		l.mu.Unlock()
		return nil, nil
	}
	if err := l.checkKind(v); err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("observe %q: %w", id, err)
	}
	item := insertion{key: l.nextKey, ts: ts, v: v}
	if l.handoff == nil && l.cfg.BatchInline && l.graphed.Load() {
		defer l.mu.Unlock()
		l.admit(id, item.key, label)
		l.landed()
		if l.pending = append(l.pending, item); len(l.pending) == takeBatch {
			l.flushPending()
		}
		return nil, nil
	}
	if l.handoff == nil {
		defer l.mu.Unlock()
		evicted, err := l.insert(item)
		if err != nil {
			return nil, fmt.Errorf("observe %q: %w", id, err)
		}
		l.admit(id, item.key, label)
		l.landed()
		return l.forget(evicted), nil
	}
	if label == "" && !l.handoff.offerUnlabeled(id, item, &l.sampled) {
		l.mu.Unlock()
		return nil, nil
	}
	l.admit(id, item.key, label)
	if label == "" {
		l.mu.Unlock()
		return nil, nil
	}
	h := l.handoff
	h.senders.Add(1)
	l.mu.Unlock()
	defer h.senders.Done()
	select {
	case h.queue <- item:
	case <-h.stopped:
		l.drop(item.key)
	}
	return nil, nil
}

// admit records a new example under key: its id and its label. The caller
// holds mu, and calls landed once the row is in the window.
func (l *Learner) admit(id string, key uint64, label string) {
	l.nextKey++
	l.keyOf[id], l.idOf[key] = key, id
	if label != "" {
		l.labels[key] = label
		l.classes[label] = true
		l.sinceLabels++
	}
}

// landed counts a row that entered the window toward the next solve: a
// solve that froze the window before a handed-off row landed did not see
// it, so the row counts when it lands, not when it was observed. The
// caller holds mu.
func (l *Learner) landed() {
	l.reaction.landed++
	l.sinceExamples++
	l.changed = true
	if l.sinceExamples == l.dueExamples() {
		select {
		case l.landedDue <- struct{}{}:
		default:
		}
	}
}

// LandedDue is signalled when examples landing in the window make a solve
// due (Due). A consumer that checks Due after each record it hands off
// misses the rows that land after its last record: those of a burst that
// the hand-off queue still held when the burst ended, which would wait
// for the next record or for schedule.solve_interval.
func (l *Learner) LandedDue() <-chan struct{} { return l.landedDue }

// insert puts a row into the window under winMu and returns the keys the
// window evicted.
func (l *Learner) insert(it insertion) ([]uint64, error) {
	l.winMu.Lock()
	defer l.winMu.Unlock()
	return l.window.Insert(it.key, it.ts, it.v)
}

// flushPending inserts the rows Observe collected (BatchInline) and
// forgets what the window evicted. The caller holds mu.
func (l *Learner) flushPending() {
	if len(l.pending) > 0 {
		l.forget(l.insertRows(l.pending))
		l.pending = l.pending[:0]
	}
}

// insertBatchAndForget inserts handed-off rows and drops the bookkeeping
// of what the window evicted.
func (l *Learner) insertBatchAndForget(batch []insertion) {
	if len(batch) == 0 {
		return
	}
	gone := l.insertRows(batch)
	l.mu.Lock()
	for range batch {
		l.landed()
	}
	l.forget(gone)
	l.mu.Unlock()
}

// insertRows inserts rows in one batch under winMu and returns the keys
// to forget: those the window evicted, and the rows it refused. Only a key
// inserted twice, a bug, makes it refuse a batch: the rows then go in one
// by one, and only the refused ones are forgotten.
func (l *Learner) insertRows(rows []insertion) []uint64 {
	items := make([]anngraph.Item, len(rows))
	for i, it := range rows {
		items[i] = anngraph.Item{Key: it.key, Time: it.ts, Vec: it.v}
	}
	l.winMu.Lock()
	evicted, err := l.window.InsertBatch(items)
	l.winMu.Unlock()
	if err == nil {
		return evicted
	}
	evicted = evicted[:0]
	for _, it := range rows {
		ev, err := l.insert(it)
		if err != nil {
			ev = append(ev, it.key)
		}
		evicted = append(evicted, ev...)
	}
	return evicted
}

// vectorKind is sparse, or dense of one length.
type vectorKind struct {
	dense    bool
	denseLen int
}

// ErrIncompatible is returned for a vector that the window cannot hold
// with the others: sparse and dense mixed, dense of another length, or an
// index beyond the feature space.
var ErrIncompatible = errors.New("vector incompatible with the window")

// checkKind keeps the window to one kind of vector in the feature space;
// l.mu is held.
func (l *Learner) checkKind(v vector.Vector) error {
	if err := l.Compatible(v); err != nil {
		return err
	}
	if l.kind.Load() == nil {
		l.kind.Store(&vectorKind{dense: v.IsDense(), denseLen: len(v.Values)})
	}
	return nil
}

// Compatible reports whether the window could take v, changing nothing: an
// error wrapping ErrIncompatible when v is of another kind than the
// vectors observed so far, or beyond the feature space. It takes no lock,
// for scoring beside the stream.
func (l *Learner) Compatible(v vector.Vector) error {
	k := l.kind.Load()
	switch {
	case v.IsDense() && len(v.Values) > l.cfg.Features:
		return fmt.Errorf("%w: dense vector of %d values in a space of %d", ErrIncompatible, len(v.Values), l.cfg.Features)
	case !v.IsDense() && len(v.Indices) > 0 && int(v.Indices[len(v.Indices)-1]) >= l.cfg.Features:
		return fmt.Errorf("%w: index %d beyond the feature space of %d", ErrIncompatible, v.Indices[len(v.Indices)-1], l.cfg.Features)
	case k == nil:
		return nil
	case k.dense != v.IsDense():
		return fmt.Errorf("%w: a %s vector among %s ones", ErrIncompatible, kindName(v.IsDense()), kindName(k.dense))
	case k.dense && len(v.Values) != k.denseLen:
		return fmt.Errorf("%w: dense vector of %d values among vectors of %d", ErrIncompatible, len(v.Values), k.denseLen)
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

// Chosen records that the label of example id answered a request chosen
// for what the label would teach, not drawn at random: the classes of such
// labels are no sample of the stream's, and while the window holds them,
// two-class solves take the unlabeled rows' class shares from a supervised
// fit instead (train.Window.Chosen).
func (l *Learner) Chosen(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if key, ok := l.keyOf[id]; ok {
		l.chosen[key] = true
	}
}

// IsChosen reports whether the label of example id, in the window, was
// marked by Chosen.
func (l *Learner) IsChosen(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key, ok := l.keyOf[id]
	return ok && l.chosen[key]
}

func (l *Learner) setLabel(key uint64, class string) {
	if l.labels[key] == class || l.unlabeled[key] {
		return
	}
	if l.reaction.refused(key, class) {
		l.unlabeled[key] = true
		return
	}
	l.labels[key] = class
	l.classes[class] = true
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

// HasLabel reports whether example id is in the window with a label.
func (l *Learner) HasLabel(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key, ok := l.keyOf[id]
	return ok && l.labels[key] != ""
}

// TooOldCount counts the examples the window refused since the learner
// started because their event time was more than window.max_age before
// the newest it had seen: late ones, or those of a partition read behind
// the others by more than the age.
func (l *Learner) TooOldCount() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushPending()
	l.winMu.Lock()
	defer l.winMu.Unlock()
	return l.tooOldBefore + l.window.TooOldCount()
}

// WindowSize returns the number of examples in the window and how many of
// them are labeled. Examples still queued for the window (Run) count in
// neither, though their labels are known.
func (l *Learner) WindowSize() (examples, labeled int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushPending()
	l.winMu.Lock()
	defer l.winMu.Unlock()
	for k := range l.labels {
		if l.window.Contains(k) {
			labeled++
		}
	}
	return l.window.Len(), labeled
}

// Due reports whether enough examples or labels arrived for a re-solve.
func (l *Learner) Due() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reaction.urgent || l.sinceExamples >= l.dueExamples() || l.sinceLabels >= l.dueLabels()
}

// earlyExamples is the fewest new examples after which a solve is due
// while the window is small (LearnerConfig.SolveExamples).
const earlyExamples = 100

// dueExamples is the number of new examples that make a solve due: a
// tenth of the window, between earlyExamples and SolveExamples. The
// caller holds mu.
func (l *Learner) dueExamples() int {
	return l.reaction.sooner(min(l.cfg.SolveExamples, max(earlyExamples, len(l.keyOf)/10)))
}

// dueLabels is the number of new labels that make a solve due: a tenth
// of the window's labels, between one and SolveLabels. The caller holds
// mu.
func (l *Learner) dueLabels() int {
	return l.reaction.sooner(min(l.cfg.SolveLabels, max(1, len(l.labels)/10)))
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

// InForce returns the model in force, the newest solved or restored, with
// its stamp and the window it was solved on; its Model is nil before the
// first solve or restore.
func (l *Learner) InForce() Solved {
	if v := l.current.Load(); v != nil {
		return *v
	}
	return Solved{}
}

// SetModel puts s in force, such as a model restored from a snapshot
// with the stamp it was made with, the window it was solved on and its
// review thresholds; the next solve takes a version after s.Stamp's. It
// packs s.Model for scoring (Model.Pack).
func (l *Learner) SetModel(s Solved) {
	s.Model.Pack()
	l.ReserveVersions(s.Stamp.Version)
	l.current.Store(&s)
}

// SetEpoch sets the epoch that stamps the models Solve makes from now on
// (0 until it is called): the term of a learner that leads.
func (l *Learner) SetEpoch(epoch uint64) { l.epoch.Store(epoch) }

// ReserveVersions makes the solves from now on take versions after
// through: those up to it may have stamped predictions, such as the
// versions a process announced before it crashed, after its last
// snapshot.
func (l *Learner) ReserveVersions(through uint64) {
	for {
		old := l.issued.Load()
		if old >= through || l.issued.CompareAndSwap(old, through) {
			return
		}
	}
}

// Reserved returns the highest version a solve took or that SetModel or
// ReserveVersions put out of its reach: the next solve takes a later one.
func (l *Learner) Reserved() uint64 { return l.issued.Load() }

// takeVersion returns the version of the model a solve made: the one
// after every version issued or in force. The caller holds solving.
func (l *Learner) takeVersion() uint64 {
	v := max(l.issued.Load(), l.InForce().Stamp.Version) + 1
	l.ReserveVersions(v)
	return v
}

// Announcement is what an Announcer is told of a new model.
type Announcement struct {
	Stamp     model.Stamp
	SolvedOn  model.SolvedOn
	Algorithm string
}

// An Announcer makes a model known before it scores anything, such as by
// writing its stamp where an audit of the predictions finds it. An error
// drops the model: Solve returns an error wrapping ErrUnannounced, the
// model in force stays, and the version is not taken again (the
// announcement may have been written, its acknowledgement lost).
type Announcer func(ctx context.Context, a Announcement) error

// SetAnnouncer has Solve announce each model it makes with a before it is
// put in force; nil announces nothing.
func (l *Learner) SetAnnouncer(a Announcer) {
	if a == nil {
		l.announce.Store(nil)
		return
	}
	l.announce.Store(&a)
}

// ErrUnannounced is returned by Solve when the Announcer refused the new
// model: the model was dropped, and the window counts as changed, so that
// the next solve tries again under a new version.
var ErrUnannounced = errors.New("model not announced")

// Pin makes s the model that scores (Scoring, Predict) until Unpin,
// whatever the solves put in force meanwhile: a rollback, or a model held
// while newer ones are learned. Solves go on warm-started from the newest
// model, not from s's.
//
// It packs s.Model for scoring (Model.Pack).
func (l *Learner) Pin(s Solved) {
	s.Model.Pack()
	l.pinned.Store(&s)
}

// Unpin lets the newest model score again.
func (l *Learner) Unpin() { l.pinned.Store(nil) }

// Pinned returns the pinned model's stamp, and whether a model is pinned.
func (l *Learner) Pinned() (model.Stamp, bool) {
	if v := l.pinned.Load(); v != nil {
		return v.Stamp, true
	}
	return model.Stamp{}, false
}

// Scoring returns what scores, read together: the pinned model while
// there is one, else the model in force with its neighbours' vote.
func (l *Learner) Scoring() Solved {
	v := l.pinned.Load()
	if v == nil {
		v = l.current.Load()
	}
	if v == nil {
		return Solved{}
	}
	return *v
}

// Predict scores v with the model that scores (Scoring). It returns false
// while there is none.
func (l *Learner) Predict(v vector.Vector) (model.Prediction, *model.Model, model.Stamp, bool) {
	s := l.Scoring()
	if !s.Model.Ready() {
		return model.Prediction{}, nil, s.Stamp, false
	}
	return s.Predict(v), s.Model, s.Stamp, true
}

// SolveReport describes a re-solve.
type SolveReport struct {
	Version uint64 // the version of the new model
	Window  int    // examples in the window
	Labeled int    // of which labeled
	train.Stats
	// Classes counts the classes labeled in the window; KernelRank is the
	// dimension of the kernel map the model learned over (0 without one).
	Classes, KernelRank int
	// LabeledEdges counts the kNN edges between labeled rows of a graph
	// window, AgreeingEdges those that join rows of one class.
	LabeledEdges, AgreeingEdges int
	// VoteWeight is the share of the neighbours' vote in the model's
	// predictions: 0 when it does not vote (VoteConfig).
	VoteWeight float64
}

// ErrUnchanged is returned by Solve when nothing changed since the last
// solve: the solve is skipped.
var ErrUnchanged = errors.New("window unchanged since the last solve")

// Solve re-solves the model over the window, warm-started from the model in
// force, announces the new model (SetAnnouncer) and puts it in force. It
// returns ErrUnchanged when the window and its labels did not change,
// train.ErrOneClass while the labels name fewer than two classes,
// newton.ErrNoLabels while the window holds no labeled example, and an
// error wrapping ErrUnannounced when the model could not be announced.
// Examples and labels may arrive meanwhile; they count toward the next
// solve.
func (l *Learner) Solve(ctx context.Context) (SolveReport, error) {
	l.solving.Lock()
	defer l.solving.Unlock()
	if err := l.growGraph(); err != nil {
		return SolveReport{}, err
	}
	forgets := l.applyForget()
	f, ok := l.freeze()
	if !ok {
		return SolveReport{}, ErrUnchanged
	}
	rep, err := l.train(ctx, f)
	if err == nil {
		l.solvedAfter(forgets, rep.Version)
	}
	if err != nil && !errors.Is(err, train.ErrOneClass) && !errors.Is(err, newton.ErrNoLabels) {
		l.mu.Lock()
		l.changed = true // let the next trigger try again
		l.mu.Unlock()
	}
	return rep, err
}

// growGraph replaces a plain window by the kNN graph window, inserting its
// rows in order (one InsertBatch, on every core), when the algorithm
// (auto) needs a graph only once labels name three classes and they now
// do. The rows are inserted under the lock, so Observe waits for it: a
// one-time cost, early in a multi-class stream, never paid by a binary one.
// Behind a backlog it is bounded (growRows).
func (l *Learner) growGraph() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.winMu.Lock()
	defer l.winMu.Unlock()
	plain, ok := l.window.(*plainWindow)
	if !ok || !l.cfg.Params.Algorithm.GrowsGraph() || len(l.classes) < 3 {
		return nil
	}
	w, err := anngraph.New(l.cfg.Window)
	if err != nil {
		return fmt.Errorf("grow the kNN graph: %w", err)
	}
	items, left := l.growRows(plain)
	evicted, err := w.InsertBatch(items)
	if err != nil {
		return fmt.Errorf("grow the kNN graph: %w", err)
	}
	l.forget(evicted)
	l.forget(left)
	l.sampled.thinned.Add(uint64(len(left)))
	l.tooOldBefore += plain.TooOldCount()
	l.window = graphWindow{w}
	l.graphed.Store(true)
	// The same rows in another form change nothing to solve: a window
	// rebuilt plain after a restart, and marked solved, grows its graph at
	// the next trigger without solving again. Rows left out do.
	if len(evicted)+len(left) > 0 {
		l.changed = true
	}
	return nil
}

// growBacklogRows bounds the rows of a graph grown behind a backlog. A
// catch-up drain of short text reads thousands of rows before its first
// solve, and growing the graph over all of them holds both cores for
// longer than the drain takes without it (docs/RESULTS.md, "Drain").
const growBacklogRows = 2048

// growRows returns the rows of the plain window that a grown graph takes,
// in order, and the keys of those it leaves out. Without a backlog it takes
// them all. Behind one (Run's share below 1), it takes the labeled rows and
// the newest unlabeled ones, growBacklogRows in all unless the labeled rows
// alone are more: the unlabeled rows it leaves out are sampled out as
// window.sample would have under the backlog. The caller holds mu and
// winMu.
func (l *Learner) growRows(plain *plainWindow) (items []anngraph.Item, left []uint64) {
	unlabeled := plain.Len() // room for unlabeled rows
	if h := l.handoff; h != nil && h.shareNow() < 1 {
		labeled := 0
		for _, k := range plain.keys[plain.head:] {
			if l.labels[k] != "" {
				labeled++
			}
		}
		unlabeled = max(growBacklogRows-labeled, 0)
	}
	take := make([]bool, len(plain.keys))
	for i := len(plain.keys) - 1; i >= plain.head; i-- { // newest first
		switch {
		case l.labels[plain.keys[i]] != "":
			take[i] = true
		case unlabeled > 0:
			take[i] = true
			unlabeled--
		}
	}
	items = make([]anngraph.Item, 0, plain.Len())
	for i := plain.head; i < len(plain.keys); i++ {
		if !take[i] {
			left = append(left, plain.keys[i])
			continue
		}
		items = append(items, anngraph.Item{Key: plain.keys[i], Time: plain.times[i], Vec: plain.vecs[i]})
	}
	return items, left
}

// forget drops the bookkeeping of evicted rows and returns their ids.
func (l *Learner) forget(keys []uint64) []string {
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, l.idOf[k])
		delete(l.keyOf, l.idOf[k])
		delete(l.idOf, k)
		delete(l.labels, k)
		delete(l.chosen, k)
		delete(l.unlabeled, k)
	}
	return ids
}

// freeze takes the view and labels a solve works on and resets the
// triggers.
func (l *Learner) freeze() (frozen, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.changed {
		return frozen{}, false
	}
	l.flushPending()
	l.winMu.Lock()
	view := l.window.snapshot()
	l.winMu.Unlock()
	f := frozen{view: view, labels: make([]string, len(view.keys)), ids: make([]string, len(view.keys))}
	for i, k := range view.keys {
		f.labels[i] = l.labels[k]
		if f.labels[i] != "" {
			f.ids[i] = l.idOf[k]
		}
		if f.labels[i] != "" && l.chosen[k] {
			if f.chosen == nil {
				f.chosen = make([]bool, len(view.keys))
			}
			f.chosen[i] = true
		}
	}
	if l.cfg.Review.TargetPrecision > 0 {
		f.grades = l.grades.Items()
	}
	l.changed, l.sinceExamples, l.sinceLabels, l.reaction.urgent = false, 0, 0, false
	return f, true
}

// frozen is what a solve works on: the view of the window, each row's
// label ("" for none) and, for the labeled rows, id and whether the label
// was chosen (nil when none was), and the graded predictions the review
// thresholds are chosen on.
type frozen struct {
	view   windowView
	labels []string
	ids    []string
	chosen []bool
	grades []review.Grade
}

func (l *Learner) train(ctx context.Context, f frozen) (SolveReport, error) {
	view, labels := f.view, f.labels
	rep := SolveReport{Window: len(view.keys)}
	prev := l.InForce().Model
	// Checked before the graph, the map and the matrix are built: a window
	// whose labels have all left, or were dropped waiting, or name one
	// class so far, is tried again at every trigger while examples arrive.
	classes, labeled := train.Classes(prev, labels)
	rep.Labeled = labeled
	switch {
	case labeled == 0:
		return rep, newton.ErrNoLabels
	case len(classes) < 2:
		return rep, train.ErrOneClass
	}
	lap, err := view.laplacian(l.cfg.Graph)
	if err != nil {
		return rep, err
	}
	km, err := l.kernelMap(prev, view)
	if err != nil {
		return rep, err
	}
	rows, features := view.vecs, l.cfg.Features
	if km != nil {
		if rows, err = l.mapped.rows(ctx, km, view); err != nil {
			return rep, fmt.Errorf("kernel map: %w", err)
		}
		features = km.Dim()
		rep.KernelRank = km.Dim()
	}
	rep.Classes = train.ClassCount(labels)
	data := train.Window{X: linalg.NewMatrix(rows, features), Labels: labels, Chosen: f.chosen, Keys: view.keys, Rows: rows}
	if lap != nil { // a nil *anngraph.Laplacian must not become a non-nil interface
		data.Laplacian, data.Graph = lap, lap
	}
	m, st, err := train.Solve(ctx, data, l.cfg.Params, prev)
	if err != nil {
		return rep, err
	}
	m.Map = km
	rep.Stats, rep.Version = st, l.takeVersion()
	vote, weight := l.vote(view.graph, lap, labels, m, &rep)
	rep.VoteWeight = weight
	m.Pack()
	solved := &Solved{
		Model: m, Stamp: model.Stamp{Epoch: l.epoch.Load(), Version: rep.Version},
		SolvedOn: model.SolvedOn{Window: rep.Window, Labeled: rep.Labeled, Objective: st.Objective},
		Vote:     vote, VoteWeight: weight, View: l.keptView(view.graph), Algorithm: st.Algorithm,
	}
	if view.graph != nil {
		solved.Neighbours = newNeighbourhood(l.cfg.Window.Metric, view, f.ids, labels)
	}
	if t := l.cfg.Review.TargetPrecision; t > 0 {
		solved.Thresholds, solved.ThresholdsTarget = review.Thresholds(f.grades, m.Classes, t), t
	}
	if a := l.announce.Load(); a != nil {
		if err := (*a)(ctx, Announcement{Stamp: solved.Stamp, SolvedOn: solved.SolvedOn, Algorithm: string(st.Algorithm)}); err != nil {
			return rep, fmt.Errorf("%w: version %d: %w", ErrUnannounced, rep.Version, err)
		}
	}
	l.current.Store(solved)
	if l.cfg.Requests {
		l.pool.Store(l.newPool(view, solved))
	}
	return rep, nil
}

// keptView returns view when LearnerConfig.KeepView says to keep it.
func (l *Learner) keptView(view *anngraph.View) *anngraph.View {
	if !l.cfg.KeepView {
		return nil
	}
	return view
}

// landmarkSeed seeds the choice of landmarks, so that a replay of the same
// stream draws the same ones.
const landmarkSeed = 1

// kernelMap returns the kernel map of the next model: the one in force
// while it lives, or a new one over landmarks drawn from the window; nil
// without a kernel.
func (l *Learner) kernelMap(prev *model.Model, view windowView) (*kernel.Map, error) {
	if !l.cfg.Kernel.Enabled() {
		return nil, nil
	}
	if prev != nil && prev.Map != nil {
		return prev.Map, nil
	}
	km, err := kernel.NewMap(kernel.SampleLandmarks(view.vecs, l.cfg.Kernel.LandmarkCount(), landmarkSeed), l.cfg.Kernel.Gamma)
	if err != nil {
		return nil, fmt.Errorf("kernel map: %w", err)
	}
	return km, nil
}

// mappedRows caches the mapped vector of each window row by key, so that a
// row is mapped once while it stays in the window and the map lives.
type mappedRows struct {
	km    *kernel.Map
	byKey map[uint64]vector.Vector
}

// rows returns the mapped rows of view, mapping the new ones and dropping
// the rows that left; when ctx is done first, its error, with nothing
// added to the cache.
func (c *mappedRows) rows(ctx context.Context, km *kernel.Map, view windowView) ([]vector.Vector, error) {
	if c.km != km {
		c.km, c.byKey = km, map[uint64]vector.Vector{}
	}
	var todo []int
	for i, k := range view.keys {
		if _, ok := c.byKey[k]; !ok {
			todo = append(todo, i)
		}
	}
	fresh := make([]vector.Vector, len(todo))
	for j, i := range todo {
		fresh[j] = view.vecs[i]
	}
	mapped, err := km.ApplyAll(ctx, fresh)
	if err != nil {
		return nil, err
	}
	for j, v := range mapped {
		c.byKey[view.keys[todo[j]]] = v
	}
	out := make([]vector.Vector, len(view.keys))
	live := make(map[uint64]vector.Vector, len(view.keys))
	for i, k := range view.keys {
		out[i] = c.byKey[k]
		live[k] = out[i]
	}
	c.byKey = live
	return out, nil
}
