package pipeline

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"streamer/internal/ring"
	"streamer/online"
	"streamer/online/drift"
	"streamer/online/model"
	"streamer/online/train"
	"streamer/snapshot"
)

// DriftConfig says how the pipeline watches the stream for drift and how
// the learner reacts to an alarm. Zero fields mean the defaults written
// beside them, or those of the types they hold.
type DriftConfig struct {
	// Off watches nothing.
	Off bool
	// Detectors are the detectors' settings (package drift): labels
	// watches the prequential errors of the model in force, neighbours
	// the recency of an arrival's nearest window rows, scores the
	// uncertainty of the predictions.
	Detectors drift.Config
	// Sample is the fraction of the arrivals whose nearest window rows
	// the neighbours detector searches for, when the vote does not search
	// them anyway (where it votes, every arrival counts, at no cost); 0
	// means 0.25, every fourth arrival.
	Sample float64
	// Forget, at an alarm of the labels detector, makes the learner
	// forget the labels of what it admitted before the change the
	// detector estimates (with ForgetRows, the rows themselves) and solve
	// at once (online.Learner.Forget). With ForgetClasses it forgets only
	// the labels of the classes the errors since the change involve, as
	// labels or as predictions, when they are at most half of the model's
	// classes (online.Learner.ForgetClasses).
	Forget, ForgetRows, ForgetClasses bool
	// Quicken, at an alarm of a detector without labels, makes solves
	// come QuickenFactor times sooner (0 means 4) for the next
	// QuickenExamples examples (0 means 5000): the alarm is not
	// confirmed, and the labels that would confirm it are learned sooner.
	Quicken         bool
	QuickenFactor   int
	QuickenExamples int
	// Ask, at an alarm of a detector without labels, makes the budget of
	// label requests (Config.Requests, when it makes any) accrue AskFactor
	// times as fast (0 means 3) over the next AskExamples examples (0
	// means 5000).
	Ask         bool
	AskFactor   float64
	AskExamples int
	// OnAlarm, when set, is called with every alarm, after the learner
	// was told how to react, on the goroutine that called Example or
	// Label: it must not block.
	OnAlarm func(Alarm)
}

func (c DriftConfig) withDefaults() DriftConfig {
	if c.Sample == 0 {
		c.Sample = 0.25
	}
	if c.QuickenFactor == 0 {
		c.QuickenFactor = 4
	}
	if c.QuickenExamples == 0 {
		c.QuickenExamples = 5000
	}
	if c.AskFactor == 0 {
		c.AskFactor = 3
	}
	if c.AskExamples == 0 {
		c.AskExamples = 5000
	}
	return c
}

// Validate names the first bad field.
func (c DriftConfig) Validate() error {
	switch {
	case c.Sample < 0 || c.Sample > 1:
		return fmt.Errorf("sample must be in (0, 1], got %v", c.Sample)
	case c.QuickenFactor < 0 || c.QuickenExamples < 0:
		return fmt.Errorf("quicken factor and examples must be >= 0, got %d and %d", c.QuickenFactor, c.QuickenExamples)
	case c.AskFactor < 0 || c.AskExamples < 0:
		return fmt.Errorf("ask factor and examples must be >= 0, got %v and %d", c.AskFactor, c.AskExamples)
	}
	return c.Detectors.Validate()
}

// searches reports whether the neighbours detector runs, and so whether
// the learner keeps its views.
func (c DriftConfig) searches() bool { return !c.Off && !c.Detectors.Off[drift.Neighbours] }

// Alarm is a detector's alarm as the pipeline saw it.
type Alarm struct {
	drift.Alarm
	// Examples is the number of examples read, by this process and, from
	// the snapshot it resumed, those before it: the stream's position.
	// Since, in the Alarm, is in examples for the detectors without
	// labels, in the learner's positions (online.Learner.Admitted) for the
	// labels detector.
	Examples int64
	// EventTime is the time of the newest example read; Time the clock's.
	EventTime, Time time.Time
	// Model is the stamp of the model in force when it fired.
	Model model.Stamp
	// Reactions says what the learner was told: forget (the labels
	// before the change), forget_classes (those of Classes), forget_rows,
	// solve, quicken, ask.
	Reactions []string
	// Classes, for an alarm of the labels, are the classes of the errors
	// since the change: the labels that came and the predictions they
	// contradicted.
	Classes []string
	// SwitchedFrom and SwitchedTo, for an alarm of the labels whose rise
	// began where the learner's models changed algorithm, name the two:
	// the learner's choice, not the stream, made the errors rise, and
	// nothing is forgotten for it.
	SwitchedFrom, SwitchedTo train.Algorithm
}

// recentAlarms bounds the alarms a pipeline remembers (Alarms).
const recentAlarms = 1000

// watch is the pipeline's drift watch; the pipeline's mu guards it, but
// for cfg and every, which do not change, and awaited.
type watch struct {
	cfg     DriftConfig
	monitor *drift.Monitor
	every   int64 // search every every-th arrival for neighbours
	// awaited is the learner's count of forgets (online.Learner.Forgets)
	// after the newest alarm that made it forget; 0 before any. rescore
	// is set from that alarm until a model solved after the forget
	// scores.
	awaited atomic.Uint64
	rescore atomic.Bool
	alarms  []Alarm
	total   int
	newest  time.Time
	kind    modelKind // of the last model that scored
	// graded holds the newest keptGraded labels the labels detector was
	// shown; the newest sinceAlarm of them came since its last alarm.
	graded     ring.Ring[graded]
	sinceAlarm int
	// served holds the algorithms of the newest models that scored, the
	// newest of version lastServed.
	served     ring.Ring[served]
	lastServed uint64
}

// served is the algorithm of the model of a version.
type served struct {
	version   uint64
	algorithm train.Algorithm
}

// modelKind is what makes one model's uncertainties comparable with
// another's: its classes, whether it classifies by centroids (sr),
// whether the neighbours' vote blends in, and the algorithm that solved
// it (auto's trial may serve svm at one solve and lapsvm at the next,
// whose probabilities spread differently).
type modelKind struct {
	classes         int
	centroids, vote bool
	algorithm       train.Algorithm
}

func kindOf(s online.Solved) modelKind {
	return modelKind{classes: len(s.Model.Classes), centroids: s.Model.Centroids != nil, vote: s.Vote != nil && s.VoteWeight > 0, algorithm: s.Algorithm}
}

func newWatch(cfg DriftConfig) (*watch, error) {
	if cfg.Off {
		return nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	cfg = cfg.withDefaults()
	m, err := drift.NewMonitor(cfg.Detectors)
	if err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	return &watch{cfg: cfg, monitor: m, every: max(1, int64(math.Round(1/cfg.Sample))), graded: ring.New[graded](keptGraded), served: ring.New[served](keptServed)}, nil
}

// search reports whether the arrival-th arrival's nearest rows are to be
// searched for where the vote does not search them.
func (w *watch) search(arrival int64) bool {
	return w != nil && w.cfg.searches() && arrival%w.every == 0
}

// arrival gives the detectors without labels what scoring an example
// found. The caller holds the pipeline's mu.
func (w *watch) arrival(s online.Scored, kind modelKind, scored bool, version uint64, ts time.Time, now int64) []drift.Alarm {
	if w == nil {
		return nil
	}
	if scored && (w.served.Len() == 0 || w.lastServed != version) {
		w.served.Add(served{version: version, algorithm: kind.algorithm})
		w.lastServed = version
	}
	if scored && kind != w.kind {
		// A model of other classes, or of another kind, is as uncertain
		// as it is: the stream did not change for that.
		w.kind = kind
		w.monitor.Reset(drift.Scores)
	}
	if ts.After(w.newest) {
		w.newest = ts
	}
	var out []drift.Alarm
	if z, ok := drift.Recency(rows(s), s.Rows); ok {
		if a, ok := w.monitor.Recency(z, now); ok {
			out = append(out, a)
		}
	}
	if scored && s.Prob > 0 {
		if a, ok := w.monitor.Uncertainty(1-s.Prob, now); ok {
			out = append(out, a)
		}
	}
	return out
}

func rows(s online.Scored) []int {
	if len(s.Near) == 0 {
		return nil
	}
	out := make([]int, len(s.Near))
	for i, nb := range s.Near {
		out[i] = nb.Row
	}
	return out
}

// graded is a label the labels detector was shown (the example's id, the
// class predicted at its arrival, the label, whether the detector was
// given it), the position of its example and the version of the model
// that predicted it.
type graded struct {
	snapshot.DriftLabel
	position, version uint64
}

// keptServed bounds the models whose algorithms a watch remembers.
const keptServed = 256

// keptGraded bounds the labels a watch keeps to name the classes of an
// alarm and to take up at a restore: more than a detector's recent
// labels and reference hold.
const keptGraded = 1024

// outcome shows the labels detector the label of example id, at
// position, predicted as class by a model that came before the forget of
// the newest alarm took effect when stale: the detector does not judge
// those. The caller holds the pipeline's mu.
func (w *watch) outcome(id, class, label string, position uint64, now int64, version uint64, stale bool) []drift.Alarm {
	if w == nil {
		return nil
	}
	fed := !stale && w.monitor.Listens(drift.Labels, now)
	w.keep(graded{DriftLabel: snapshot.DriftLabel{ID: id, Predicted: class, Label: label, Fed: fed}, position: position, version: version})
	if stale {
		return nil
	}
	a, ok := w.monitor.Outcome(class != label, int64(position), now)
	if !ok {
		return nil
	}
	w.sinceAlarm = 0
	return []drift.Alarm{a}
}

// keep adds g to the graded labels.
func (w *watch) keep(g graded) {
	w.graded.Add(g)
	w.sinceAlarm = min(w.sinceAlarm+1, keptGraded)
}

// progress is what a snapshot keeps of the watch at position now: each
// detector's alarms, the last alarm, the positions after now that
// detectors are deaf until, and the labels since the labels detector's
// last alarm, when it runs. The caller holds the pipeline's mu.
func (w *watch) progress(now int64) *snapshot.DriftWatch {
	if w == nil {
		return nil
	}
	var labels []snapshot.DriftLabel
	if w.monitor.On(drift.Labels) {
		for _, g := range w.graded.Newest(w.sinceAlarm) {
			labels = append(labels, g.DriftLabel)
		}
	}
	deaf := w.monitor.Deaf()
	maps.DeleteFunc(deaf, func(_ string, until int64) bool { return until <= now })
	var last *snapshot.DriftAlarm
	if n := len(w.alarms); n > 0 {
		a := w.alarms[n-1].kept()
		last = &a
	}
	return snapshot.NewDriftWatch(deaf, w.monitor.Alarmed(), last, labels)
}

// resume takes up the watch a snapshot kept (progress), the labels'
// examples now at positions in the window rebuilt. The caller holds the
// pipeline's mu.
func (w *watch) resume(kept *snapshot.DriftWatch, positions []uint64) {
	st := drift.State{Deaf: kept.Deaf, Alarms: kept.Alarms}
	for i, l := range kept.Labels() {
		w.keep(graded{DriftLabel: l, position: positions[i]})
		if l.Fed {
			st.Outcomes = append(st.Outcomes, drift.Outcome{Wrong: l.Predicted != l.Label, Example: int64(positions[i])})
		}
	}
	w.monitor.Resume(st)
	w.total = kept.Total()
	if kept.Last != nil {
		w.alarms = append(w.alarms, resumedAlarm(*kept.Last))
	}
}

// kept returns the alarm as a snapshot keeps it.
func (a Alarm) kept() snapshot.DriftAlarm {
	return snapshot.DriftAlarm{Detector: a.Detector, Statistic: a.Statistic, Threshold: a.Threshold, Examples: a.Examples, ChangeAt: a.Since,
		EventTime: a.EventTime, Time: a.Time, Model: a.Model, Reactions: a.Reactions, Classes: a.Classes}
}

// resumedAlarm returns an alarm a snapshot kept.
func resumedAlarm(k snapshot.DriftAlarm) Alarm {
	return Alarm{Alarm: drift.Alarm{Detector: k.Detector, Statistic: k.Statistic, Threshold: k.Threshold, At: k.Examples, Since: k.ChangeAt},
		Examples: k.Examples, EventTime: k.EventTime, Time: k.Time, Model: k.Model, Reactions: k.Reactions, Classes: k.Classes}
}

// errorClasses returns, sorted, the classes of the graded labels of
// examples at or after position that contradicted their predictions:
// both the label and the prediction.
func (w *watch) errorClasses(position int64) []string {
	seen := map[string]bool{}
	for g := range w.graded.All {
		if int64(g.position) >= position && g.Predicted != g.Label {
			seen[g.Predicted], seen[g.Label] = true, true
		}
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// switchShare is the share of the outcomes before a rise, and of those
// in it, that must each be of one algorithm for the rise to be the
// learner's switch; switchBefore and switchAfter are the fewest outcomes
// each must count, and switchReference the most counted before.
const (
	switchShare     = 0.8
	switchBefore    = 10
	switchAfter     = 5
	switchReference = 50
)

// switched returns the algorithms the learner's models switched from and
// to where the labels detector's rise since position began: the outcomes
// it was fed from position on were predicted, switchShare of them or
// more, by models of another algorithm than switchShare or more of the
// switchReference fed before (a model whose algorithm is not known
// counts for neither). Otherwise it returns "". The caller holds the
// pipeline's mu.
func (w *watch) switched(position int64) (from, to train.Algorithm) {
	algorithm := map[uint64]train.Algorithm{}
	for s := range w.served.All {
		algorithm[s.version] = s.algorithm
	}
	var before, after []uint64 // versions
	for _, g := range w.graded.Items() {
		switch {
		case !g.Fed:
		case int64(g.position) >= position:
			after = append(after, g.version)
		default:
			before = append(before, g.version)
		}
	}
	before = before[max(0, len(before)-switchReference):]
	if len(before) < switchBefore || len(after) < switchAfter {
		return "", ""
	}
	from, fromShare := mostOf(before, algorithm)
	to, toShare := mostOf(after, algorithm)
	if from == to || fromShare < switchShare || toShare < switchShare {
		return "", ""
	}
	return from, to
}

// mostOf returns the algorithm that most of the models of versions are
// of, and its share; a version not in algorithm counts as none.
func mostOf(versions []uint64, algorithm map[uint64]train.Algorithm) (train.Algorithm, float64) {
	count := map[train.Algorithm]int{}
	var most train.Algorithm
	for _, v := range versions {
		a, ok := algorithm[v]
		if !ok {
			continue
		}
		count[a]++
		if count[a] > count[most] {
			most = a
		}
	}
	return most, float64(count[most]) / float64(len(versions))
}

// react tells the learners how to react to the alarms, remembers them and
// hands them to OnAlarm. The caller does not hold the pipeline's mu.
func (p *Pipeline) react(found []drift.Alarm) {
	if len(found) == 0 {
		return
	}
	w := p.watch
	stamp := p.learner.InForce().Stamp
	for _, a := range found {
		out := Alarm{Alarm: a, Examples: a.At, Time: time.Now(), Model: stamp}
		if a.Detector == drift.Labels {
			p.mu.Lock()
			out.Classes = w.errorClasses(a.Since)
			out.SwitchedFrom, out.SwitchedTo = w.switched(a.Since)
			p.mu.Unlock()
		}
		switch {
		case out.SwitchedTo != "":
			// Forgetting labels would not mend the learner's choice.
		case a.Detector == drift.Labels && w.cfg.Forget:
			out.Reactions = p.forget(uint64(max(0, a.Since)), out.Classes)
			w.awaited.Store(p.learner.Forgets())
			w.rescore.Store(true)
		case a.Detector != drift.Labels:
			out.Reactions = p.unconfirmed()
		}
		p.mu.Lock()
		if a.Detector == drift.Labels && w.cfg.Forget && out.SwitchedTo == "" {
			// The model re-solved without the old labels scores otherwise
			// (and the scores detector starts again once it scores).
			w.monitor.Restart(drift.Neighbours, a.At)
			w.monitor.Restart(drift.Scores, a.At)
		}
		out.EventTime = w.newest
		if len(w.alarms) == recentAlarms {
			w.alarms = append(w.alarms[:0], w.alarms[1:]...)
		}
		w.alarms = append(w.alarms, out)
		w.total++
		p.mu.Unlock()
		if w.cfg.OnAlarm != nil {
			w.cfg.OnAlarm(out)
		}
	}
}

// forget reacts to an alarm of the labels whose change began at position
// and whose errors since involve classes, as the configuration says, and
// returns the reactions. The review grades of the classes whose labels it
// forgets go with them. It forgets the labels of those classes only when
// they are at most half of the model's: the classes whose labels stay
// then outnumber those left with only the labels since the change. A
// class that keeps its old labels beside classes that lost theirs draws
// the predictions of the others (TestDriftForgetsTheClassesThatChanged),
// and a change that touches most classes is one of the whole stream.
func (p *Pipeline) forget(position uint64, classes []string) []string {
	cfg := p.watch.cfg
	known := len(p.learner.InForce().Model.Classes)
	reaction, apply := "forget", func(l *online.Learner) { l.Forget(position, false) }
	var graded []string // the classes whose review grades go; none: every class's
	switch {
	case cfg.ForgetRows:
		reaction, apply = "forget_rows", func(l *online.Learner) { l.Forget(position, true) }
	case cfg.ForgetClasses && len(classes) > 0 && 2*len(classes) <= known:
		reaction, apply = "forget_classes", func(l *online.Learner) { l.ForgetClasses(position, classes) }
		graded = classes
	}
	for _, l := range p.learners() {
		apply(l)
	}
	p.learner.ForgetGrades(graded)
	return []string{reaction, "solve"}
}

// unconfirmed reacts to an alarm without labels, as the configuration
// says, and returns the reactions.
func (p *Pipeline) unconfirmed() []string {
	cfg := p.watch.cfg
	var out []string
	if cfg.Quicken {
		for _, l := range p.learners() {
			l.Quicken(cfg.QuickenFactor, cfg.QuickenExamples)
		}
		out = append(out, "quicken")
	}
	if cfg.Ask && p.requests != nil {
		p.requests.selector.Raise(cfg.AskFactor, int64(cfg.AskExamples))
		out = append(out, "ask")
	}
	return out
}

// stale reports whether a prediction made by the model of version came
// before the forget of the newest alarm that made the learner forget
// took effect: the labels detector does not judge it. An older model's
// errors measure the change the detector alarmed at, and after a false
// alarm its successes would make the model that forgot, when it comes,
// look like a change: solves come late under load, and labels later
// still. A model pinned from before the forget is not judged either.
func (p *Pipeline) stale(version uint64) bool {
	forgets := p.watch.awaited.Load()
	if forgets == 0 {
		return false
	}
	first, ok := p.learner.Reacted(forgets)
	return !ok || version < first
}

// learners returns the learner and, when it runs, the baseline, which
// react alike so that the two stay comparable.
func (p *Pipeline) learners() []*online.Learner {
	if p.baseline != nil {
		return []*online.Learner{p.learner, p.baseline}
	}
	return []*online.Learner{p.learner}
}

// DriftStatus is the drift watch's state: each detector's, the alarms
// counted and the last one.
type DriftStatus struct {
	Detectors []drift.Status
	Alarms    int
	Last      *Alarm
}

// DriftStatus returns the drift watch's state now; zero when it is off.
func (p *Pipeline) DriftStatus() DriftStatus {
	if p.watch == nil {
		return DriftStatus{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := DriftStatus{Detectors: p.watch.monitor.Status(), Alarms: p.watch.total}
	if n := len(p.watch.alarms); n > 0 {
		last := p.watch.alarms[n-1]
		st.Last = &last
	}
	return st
}

// Alarms returns the alarms so far, oldest first (the last thousand).
func (p *Pipeline) Alarms() []Alarm {
	if p.watch == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Alarm(nil), p.watch.alarms...)
}
