package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"streamer/ingest"
	"streamer/online"
	"streamer/online/active"
	"streamer/online/drift"
	"streamer/online/newton"
	"streamer/online/review"
	"streamer/online/train"
	"streamer/snapshot"
	"streamer/vector"
)

// Config describes a Pipeline. Zero fields mean the defaults of the types
// they hold.
type Config struct {
	Decoder ingest.Decoder
	Learner online.LearnerConfig
	Join    ingest.JoinConfig
	// Baseline also runs the same learner with the unlabeled data ignored
	// (svm on the labeled rows: λ_u = λ_I = 0), on the same labels, to
	// show what semi-supervised learning adds.
	Baseline bool
	// Horizon is the number of recent labels the recent scores cover; 0
	// means 500. CurveStep is the number of labels between points of the
	// prequential curves; 0 means 100.
	Horizon   int
	CurveStep int
	// Drift says how the stream is watched for drift, and how the learner
	// reacts (drift.go).
	Drift DriftConfig
	// Requests, with a budget, has the learner choose label requests from
	// its window (Requests); the zero value makes none.
	Requests active.Config
	// Clock tells the time of a label, for the expiry of the request it
	// answers; nil means time.Now.
	Clock func() time.Time
	// Explain, when positive, explains every prediction by its Explain
	// largest terms and as many neighbours (Explanation); the decoder then
	// keeps the names of hashed features. 0 explains nothing.
	Explain int
	// Review routes uncertain predictions to review.
	Review ReviewConfig
}

// Pipeline scores, learns and evaluates. Example and Label are meant for
// one goroutine (the consumer of the stream, in order); Solve may run on
// another, and Stats on any.
type Pipeline struct {
	cfg      Config
	learner  *online.Learner
	baseline *online.Learner
	join     *ingest.Join
	watch    *watch // nil with Drift.Off
	// arrivals counts the calls of Arrival; only its goroutine reads it.
	arrivals int64

	mu        sync.Mutex // guards the fields below
	ssl, base *Prequential
	examples  int64
	// before is the stream's position at the snapshot resumed: examples
	// read by the processes before this one.
	before       int64
	labels       int64
	joined       int64 // labels that met their example, before or after it
	predictions  int64
	exampleLog   *offsetTracker
	labelLog     *offsetTracker
	lastSolve    online.SolveReport
	lastErr      error // of the last solve attempt
	solves       int64
	solveSeconds float64
	requests     *requester // nil without Config.Requests
}

// New returns a pipeline with an empty window and no model.
func New(cfg Config) (*Pipeline, error) {
	if err := cfg.Decoder.Validate(); err != nil {
		return nil, err
	}
	watch, err := newWatch(cfg.Drift)
	if err != nil {
		return nil, err
	}
	cfg.Learner.KeepView = cfg.Learner.KeepView || cfg.Drift.searches()
	cfg.Learner.Requests = !cfg.Requests.Budget.Zero()
	if err := cfg.Review.Validate(); err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	if cfg.Explain < 0 {
		return nil, fmt.Errorf("explain must be >= 0, got %d", cfg.Explain)
	}
	cfg.Decoder.KeepNames = cfg.Decoder.KeepNames || cfg.Explain > 0
	learner, err := online.NewLearner(cfg.Learner)
	if err != nil {
		return nil, fmt.Errorf("learner: %w", err)
	}
	join, err := ingest.NewJoin(cfg.Join)
	if err != nil {
		return nil, err
	}
	p := &Pipeline{
		cfg:     cfg,
		learner: learner,
		join:    join,
		watch:   watch,
		ssl:     NewPrequential(cfg.Horizon, cfg.CurveStep),
		base:    NewPrequential(cfg.Horizon, cfg.CurveStep),
	}
	if cfg.Baseline {
		bc := cfg.Learner
		bc.Params.Algorithm, bc.Params.LambdaU, bc.Params.LambdaI = train.SVM, 0, 0
		if p.baseline, err = online.NewLearner(bc); err != nil {
			return nil, fmt.Errorf("baseline learner: %w", err)
		}
	}
	if p.requests, err = newRequester(cfg.Requests); err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	if p.cfg.Clock == nil {
		p.cfg.Clock = time.Now
	}
	p.exampleLog = newOffsetTracker(learner.Contains)
	p.labelLog = newOffsetTracker(func(id string) bool { return learner.Contains(id) || join.Pending(id) })
	return p, nil
}

// Learner returns the semi-supervised learner.
func (p *Pipeline) Learner() *online.Learner { return p.learner }

// Baseline returns the supervised-only learner; nil without Config.Baseline.
func (p *Pipeline) Baseline() *online.Learner { return p.baseline }

// DecodeExample decodes an example message, a JSON message without its
// record (POST /v1/predict); an example without a time takes the
// message's.
func (p *Pipeline) DecodeExample(raw []byte, messageTime time.Time) (ingest.Example, error) {
	return p.decodeExample(p.cfg.Decoder, raw, messageTime)
}

// DecodeNamed is DecodeExample that also names the example's hashed
// features (ingest.Decoder.KeepNames), for an explanation.
func (p *Pipeline) DecodeNamed(raw []byte, messageTime time.Time) (ingest.Example, error) {
	d := p.cfg.Decoder
	d.KeepNames = true
	return p.decodeExample(d, raw, messageTime)
}

func (p *Pipeline) decodeExample(d ingest.Decoder, raw []byte, messageTime time.Time) (ingest.Example, error) {
	ex, err := d.DecodeExample(raw)
	if err == nil && ex.TS.IsZero() {
		ex.TS = messageTime
	}
	return ex, err
}

// DecodeExampleRecord decodes the example of an input record, of its key
// and value; an example without a time takes the record's.
func (p *Pipeline) DecodeExampleRecord(ctx context.Context, key, value []byte, recordTime time.Time) (ingest.Example, error) {
	ex, err := p.cfg.Decoder.DecodeExampleRecord(ctx, key, value)
	if err == nil && ex.TS.IsZero() {
		ex.TS = recordTime
	}
	return ex, err
}

// DecodeLabel decodes a label message without its record.
func (p *Pipeline) DecodeLabel(raw []byte) (ingest.Label, error) {
	return p.cfg.Decoder.DecodeLabel(raw)
}

// DecodeLabelRecord decodes the label of an input record.
func (p *Pipeline) DecodeLabelRecord(ctx context.Context, key, value []byte) (ingest.Label, error) {
	return p.cfg.Decoder.DecodeLabelRecord(ctx, key, value)
}

// Example scores ex with the model in force (test), then adds it to the
// window with its label if it carries one or one was waiting (train), and
// returns the prediction to publish. An example the window cannot take
// (for example a dense vector of another length) is an error: no
// prediction, and the caller sends it to the dead letters.
func (p *Pipeline) Example(ex ingest.Example, src Source) (Prediction, error) {
	out, _, err := p.Arrival(ex, src)
	return out, err
}

// Arrival is Example, and also returns the predictions made on arrival as
// the join keeps them to score later: the learner's class and the
// baseline's ("" where there was no model yet).
func (p *Pipeline) Arrival(ex ingest.Example, src Source) (Prediction, ingest.Prediction, error) {
	p.arrivals++
	out, stored, scored, kind, ok := p.predict(ex, src, p.watch.search(p.arrivals))
	if err := p.learner.Compatible(ex.Vector); err != nil {
		return out, stored, fmt.Errorf("example %q: %w", ex.ID, err)
	}
	waiting, early := p.join.Example(ex.ID, stored, ex.Labeled)
	truth := ex.Label
	if !ex.Labeled && early {
		truth = waiting
	}
	// With its waiting label, an example enters the window however busy
	// the learner is.
	if _, err := p.learner.Observe(ex.ID, ex.TS, ex.Vector, truth); err != nil {
		return out, stored, fmt.Errorf("example %q: %w", ex.ID, err)
	}
	if p.baseline != nil {
		if _, err := p.baseline.Observe(ex.ID, ex.TS, ex.Vector, truth); err != nil {
			return out, stored, fmt.Errorf("example %q: baseline: %w", ex.ID, err)
		}
	}
	var position uint64
	var stale bool
	if p.watch != nil && truth != "" && stored.Class != "" {
		position, _ = p.learner.Admitted(ex.ID)
		stale = p.stale(stored.ModelVersion)
	}
	// The first model solved after a forget is as uncertain as it is.
	rescored := p.watch != nil && ok && p.watch.rescore.Load() && !p.stale(stored.ModelVersion)
	p.mu.Lock()
	p.examples++
	p.predictions++
	if !ex.Labeled && early {
		p.joined++
	}
	p.exampleLog.add(src.Topic, src.Partition, src.Offset, ex.ID, true)
	if p.requests != nil {
		p.arrived(ex.ID, src)
	}
	if truth != "" {
		p.ssl.Add(stored.Class, truth, int(p.examples))
		p.base.Add(stored.Baseline, truth, int(p.examples))
		p.learner.Grade(review.Grade{Class: stored.Class, Prob: stored.Prob, Correct: stored.Class == truth})
	}
	if rescored && p.watch.rescore.CompareAndSwap(true, false) {
		p.watch.monitor.Restart(drift.Scores, p.position())
	}
	found := p.watch.arrival(scored, kind, ok, stored.ModelVersion, ex.TS, p.position())
	if truth != "" && stored.Class != "" {
		found = append(found, p.watch.outcome(ex.ID, stored.Class, truth, position, p.position(), stored.ModelVersion, stale)...)
	}
	p.mu.Unlock()
	p.react(found)
	return out, stored, nil
}

// predict scores ex with both learners; search asks for the nearest
// window rows where the vote does not search them (online.Solved.Score).
// It reports the kind of the model that scored, and whether the learner had
// one.
func (p *Pipeline) predict(ex ingest.Example, src Source, search bool) (Prediction, ingest.Prediction, online.Scored, modelKind, bool) {
	stored := ingest.Prediction{At: ex.TS}
	s := p.learner.Scoring()
	st := s.Stamp
	stored.ModelVersion = st.Version
	var out Prediction
	var scored online.Scored
	var kind modelKind
	ok := s.Model.Ready()
	if ok {
		scored, kind = s.Score(ex.Vector, search), kindOf(s)
		out = p.newPrediction(ex, src, s, scored.Prediction, p.cfg.Explain)
		stored.Class, stored.Score, stored.Prob = *out.Label, scored.Scores[scored.Class], scored.Prob
	} else {
		out = Prediction{ID: ex.ID, TS: ex.TS, Source: src, Scores: map[string]float64{}, ModelVersion: st.Version, ModelEpoch: st.Epoch, Reason: p.noModelReason()}
	}
	if p.baseline != nil {
		if bp, bm, _, ok := p.baseline.Predict(ex.Vector); ok {
			stored.Baseline = bm.Classes[bp.Class]
		}
	}
	return out, stored, scored, kind, ok
}

func (p *Pipeline) noModelReason() string { return p.noModel().Error() }

// ErrNoModel is returned by Score while no model is in force; the error
// says why, in the words of a prediction's reason.
var ErrNoModel = errors.New("no model yet")

func (p *Pipeline) noModel() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if errors.Is(p.lastErr, train.ErrOneClass) || errors.Is(p.lastErr, newton.ErrNoLabels) {
		return fmt.Errorf("%w: labels of at least two classes are needed", ErrNoModel)
	}
	return fmt.Errorf("%w: waiting for the first solve", ErrNoModel)
}

// Compatible reports whether the window could take v (Example would
// accept it), changing nothing: an error wrapping online.ErrIncompatible
// when it could not.
func (p *Pipeline) Compatible(v vector.Vector) error { return p.learner.Compatible(v) }

// Score scores examples with the model that scores (the pinned one, if
// any, else the model in force), all with the same model, and learns
// nothing: no example enters the window or the join, and no
// count or prequential score moves. Each prediction is the one Example
// would have made with that model. It returns an error wrapping ErrNoModel
// while there is no model. It is safe for concurrent use, beside the
// stream and solves.
func (p *Pipeline) Score(exs []ingest.Example, src Source) ([]Prediction, error) {
	return p.ScoreExplained(exs, src, p.cfg.Explain)
}

// ScoreExplained is Score with an explanation of k terms and neighbours
// in each prediction (none for k = 0).
func (p *Pipeline) ScoreExplained(exs []ingest.Example, src Source, k int) ([]Prediction, error) {
	s := p.learner.Scoring()
	if !s.Model.Ready() {
		return nil, p.noModel()
	}
	out := make([]Prediction, len(exs))
	for i, ex := range exs {
		out[i] = p.newPrediction(ex, src, s, s.Predict(ex.Vector), k)
	}
	return out, nil
}

// ScoreOne is Score of a single example, without the slices.
func (p *Pipeline) ScoreOne(ex ingest.Example, src Source) (Prediction, error) {
	s := p.learner.Scoring()
	if !s.Model.Ready() {
		return Prediction{}, p.noModel()
	}
	return p.newPrediction(ex, src, s, s.Predict(ex.Vector), p.cfg.Explain), nil
}

// Label joins a late label: it labels the example if it is still in the
// window (the next solve learns from it), and scores the prediction made
// for it when it arrived. A label for an example not seen yet waits for it.
// It reports whether the label found its example.
func (p *Pipeline) Label(l ingest.Label, src Source) bool {
	p.learner.Label(l.ID, l.Label)
	if p.baseline != nil {
		p.baseline.Label(l.ID, l.Label)
	}
	stored, seen, first := p.join.Label(l.ID, l.Label)
	chosen := p.answersChosen(l)
	if chosen {
		p.learner.Chosen(l.ID)
	}
	var position uint64
	var stale bool
	// An answer to a chosen request is a hard example by design: its
	// error says nothing of a change in the stream, nor of how often the
	// predictions above a review threshold are right.
	watched := p.watch != nil && seen && first && stored.Class != "" && !chosen
	if watched {
		position, _ = p.learner.Admitted(l.ID)
		stale = p.stale(stored.ModelVersion)
	}
	p.mu.Lock()
	p.labels++
	if seen {
		p.joined++
	}
	p.labelLog.add(src.Topic, src.Partition, src.Offset, l.ID, true)
	if seen && first {
		p.ssl.Add(stored.Class, l.Label, int(p.examples))
		p.base.Add(stored.Baseline, l.Label, int(p.examples))
		if !chosen {
			p.learner.Grade(review.Grade{Class: stored.Class, Prob: stored.Prob, Correct: stored.Class == l.Label})
		}
	}
	var found []drift.Alarm
	if watched {
		found = p.watch.outcome(l.ID, stored.Class, l.Label, position, p.position(), stored.ModelVersion, stale)
	}
	p.mu.Unlock()
	p.react(found)
	return seen
}

// answersChosen tells the label requests that l came, and reports whether
// it answers a request chosen for what it teaches (not one drawn at
// random).
func (p *Pipeline) answersChosen(l ingest.Label) bool {
	if p.requests == nil {
		return false
	}
	req, answers, _ := p.requests.selector.Labeled(l.ID, l.Label, p.cfg.Clock())
	return answers && req.Reason.Strategy != active.StrategyRandom
}

// Restore replays an example that was read and predicted before a restart:
// it enters the window and the join, with the label that waited for it if
// one did, without a prediction to publish. An unlabeled example is
// scored by the model in force, the one restored, and that prediction
// waits in the join for its late label in place of the one published
// before the restart, which is not read back.
func (p *Pipeline) Restore(ex ingest.Example, src Source) error {
	if err := p.learner.Compatible(ex.Vector); err != nil {
		return fmt.Errorf("restore example %q: %w", ex.ID, err)
	}
	var stored ingest.Prediction
	if !ex.Labeled && !p.join.Pending(ex.ID) {
		stored = p.restoredPrediction(ex)
	}
	truth := ex.Label
	if waiting, early := p.join.Example(ex.ID, stored, ex.Labeled); early && !ex.Labeled {
		truth = waiting
	}
	if _, err := p.learner.Observe(ex.ID, ex.TS, ex.Vector, truth); err != nil {
		return fmt.Errorf("restore example %q: %w", ex.ID, err)
	}
	if p.baseline != nil {
		if _, err := p.baseline.Observe(ex.ID, ex.TS, ex.Vector, truth); err != nil {
			return fmt.Errorf("restore example %q: baseline: %w", ex.ID, err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exampleLog.add(src.Topic, src.Partition, src.Offset, ex.ID, true)
	if p.requests != nil {
		p.keepSource(ex.ID, src)
	}
	return nil
}

// restoredPrediction is the prediction of the model in force for an
// example read again at a restart ("" without a model).
func (p *Pipeline) restoredPrediction(ex ingest.Example) ingest.Prediction {
	s := p.learner.Scoring()
	stored := ingest.Prediction{At: ex.TS, ModelVersion: s.Stamp.Version}
	if s.Model.Ready() {
		scored := s.Score(ex.Vector, false)
		stored.Class, stored.Score, stored.Prob = s.Model.Classes[scored.Class], scored.Scores[scored.Class], scored.Prob
	}
	return stored
}

// RestoreLabel replays a label read before a restart; it is not scored,
// and a label for the same example after the restart is a relabel.
func (p *Pipeline) RestoreLabel(l ingest.Label, src Source) {
	p.learner.Label(l.ID, l.Label)
	if p.baseline != nil {
		p.baseline.Label(l.ID, l.Label)
	}
	p.join.Label(l.ID, l.Label)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.labelLog.add(src.Topic, src.Partition, src.Offset, l.ID, true)
}

// ExampleRefused records that the example record at src was read and
// refused (its caller dead-letters it): the stream's position moves past
// it, and nothing of it is held. Without it, a snapshot taken after a
// partition's last record was refused would place that record ahead of
// the window, and a restore would take the window it rebuilt for another
// one (and solve it again) or, in role learner, read the record again.
func (p *Pipeline) ExampleRefused(src Source) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exampleLog.add(src.Topic, src.Partition, src.Offset, "", false)
}

// LabelRefused is ExampleRefused for a label record.
func (p *Pipeline) LabelRefused(src Source) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.labelLog.add(src.Topic, src.Partition, src.Offset, "", false)
}

// Run hands the learner's window insertions (the kNN graph's) to a
// goroutine of its own until ctx is done, so that scoring and publishing
// never wait for them (online.Learner.Run). Without it every example is
// inserted before Example returns, as eval and replay need. share paces
// the inserts (online.Learner.Run); nil does not.
func (p *Pipeline) Run(ctx context.Context, share func() float64) error {
	return p.learner.Run(ctx, share)
}

// Flush waits until the examples handed to the learner are in its window.
func (p *Pipeline) Flush(ctx context.Context) error { return p.learner.Flush(ctx) }

// Due reports whether a re-solve is due by count of new examples or labels.
func (p *Pipeline) Due() bool { return p.learner.Due() }

// Solve re-solves the learner (and the baseline) over the window. It
// returns online.ErrUnchanged when the window did not change.
func (p *Pipeline) Solve(ctx context.Context) (online.SolveReport, error) {
	if p.baseline != nil {
		if _, err := p.baseline.Solve(ctx); err != nil && !isSkip(err) {
			return online.SolveReport{}, fmt.Errorf("baseline: %w", err)
		}
	}
	rep, err := p.learner.Solve(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !errors.Is(err, online.ErrUnchanged) {
		p.lastErr = err
	}
	if err != nil {
		return rep, err
	}
	p.solves++
	p.solveSeconds += rep.Seconds
	p.lastSolve = rep
	return rep, nil
}

// isSkip reports whether a solve error only means there was nothing to do
// yet.
func isSkip(err error) bool {
	return errors.Is(err, online.ErrUnchanged) || errors.Is(err, train.ErrOneClass) || errors.Is(err, newton.ErrNoLabels)
}

// IsSkip reports whether err from Solve only means there was nothing to
// solve yet: an unchanged window, a window without a labeled example, or
// labels of fewer than two classes.
func IsSkip(err error) bool { return isSkip(err) }

// SetModel puts a restored model in force (Restored): its predictions
// carry its epoch and version, and are routed to review by its
// thresholds, until the next solve.
func (p *Pipeline) SetModel(s online.Solved) {
	p.learner.SetModel(s)
}

// Restored returns snap's model as the learner holds it: with the stamp
// of the snapshot, the window it was solved on, and the review thresholds
// it was published with.
func Restored(snap *snapshot.Snapshot) online.Solved {
	return online.Solved{
		Model: &snap.Model, Stamp: snap.Stamp(), SolvedOn: snap.SolvedOn(),
		Thresholds: snap.ReviewThresholds, ThresholdsTarget: snap.ReviewTargetPrecision,
	}
}

// Progress is what a snapshot keeps of the pipeline beside the model.
type Progress struct {
	// Solved reports that the window had not changed since the model in
	// force was solved.
	Solved   bool
	SSL      snapshot.Prequential
	Baseline *snapshot.Prequential // with Config.Baseline
	// Unlabeled are the ids of the window's rows whose labels drift made
	// the learner forget (online.Learner.Unlabeled).
	Unlabeled []string
	// Grades are the graded predictions the learner chooses review
	// thresholds on, oldest first (online.Learner.Grades).
	Grades []review.Grade
	// Drift is what the drift watch takes up at a restore; nil when it is
	// off.
	Drift *snapshot.DriftWatch
}

// Progress returns the pipeline's progress now.
func (p *Pipeline) Progress() Progress {
	solved, unlabeled, grades := !p.learner.Changed(), p.learner.Unlabeled(), p.learner.Grades()
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := Progress{Solved: solved, SSL: p.ssl.State(int(p.examples)), Unlabeled: unlabeled, Grades: grades, Drift: p.watch.progress(p.position())}
	if p.baseline != nil {
		base := p.base.State(int(p.examples))
		pr.Baseline = &base
	}
	return pr
}

// Resume continues the prequential scores, the review grades, the drift
// watch and the stream's position of a snapshot's progress, and forgets
// again the labels that drift had made the learners forget. It comes
// after the window is rebuilt: the drift watch finds the examples of its
// labels there. When the window was
// rebuilt exactly as it was at the snapshot (sameWindow) and the
// snapshot's model had been solved on it, the next solve waits for
// something new instead of solving the same window again.
func (p *Pipeline) Resume(pr Progress, sameWindow bool) {
	for _, l := range p.learners() {
		l.Unlabel(pr.Unlabeled)
	}
	p.learner.ResumeGrades(pr.Grades)
	if sameWindow && pr.Solved {
		p.learner.MarkSolved()
	}
	var positions []uint64
	if p.watch != nil && pr.Drift != nil {
		positions = p.rebuiltPositions(pr.Drift.IDs)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if positions != nil {
		p.watch.resume(pr.Drift, positions)
	}
	p.ssl.Resume(pr.SSL)
	p.before = int64(pr.SSL.Examples)
	if pr.Baseline != nil {
		p.base.Resume(*pr.Baseline)
	}
}

// rebuiltPositions returns the positions of the examples ids in the
// window rebuilt at a restore; 0, before every row, for those no longer
// in it.
func (p *Pipeline) rebuiltPositions(ids []string) []uint64 {
	out := make([]uint64, len(ids))
	for i, id := range ids {
		if key, ok := p.learner.Admitted(id); ok {
			out[i] = key
		}
	}
	return out
}

// position is the stream's position: the examples read since the
// first process began. Its caller holds mu.
func (p *Pipeline) position() int64 { return p.before + p.examples }

// Stats is a summary of the pipeline, safe to read at any time.
type Stats struct {
	Examples      int64
	Labels        int64
	Joined        int64 // labels that met their example, after it or waiting for it
	Predictions   int64
	Solves        int64
	SolveSeconds  float64
	ModelVersion  uint64
	Window        int
	WindowLabeled int
	LastSolve     online.SolveReport
	SSL           Score
	SSLRecent     Score
	Baseline      Score
	Unscored      int
	Join          ingest.JoinStats
}

// Stats returns the current summary.
func (p *Pipeline) Stats() Stats {
	version := p.learner.InForce().Stamp.Version
	window, labeled := p.learner.WindowSize()
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{
		Examples: p.examples, Labels: p.labels, Joined: p.joined, Predictions: p.predictions,
		Solves: p.solves, SolveSeconds: p.solveSeconds, ModelVersion: version,
		Window: window, WindowLabeled: labeled, LastSolve: p.lastSolve,
		SSL: p.ssl.Total(), SSLRecent: p.ssl.Recent(), Baseline: p.base.Total(),
		Unscored: p.ssl.Unscored(), Join: p.join.Stats(),
	}
}

// Curves returns the prequential accuracy curves of the learner and of the
// baseline.
func (p *Pipeline) Curves() (ssl, baseline []snapshot.CurvePoint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]snapshot.CurvePoint(nil), p.ssl.Curve()...), append([]snapshot.CurvePoint(nil), p.base.Curve()...)
}

// Positions returns, per topic partition of examples and of labels, where
// a restore must start reading again and how far the stream was read.
func (p *Pipeline) Positions() []Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(p.exampleLog.positions(), p.labelLog.positions()...)
}
