package offline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"streamer/ingest"
	"streamer/online"
	"streamer/online/active"
	"streamer/pipeline"
)

// EvalConfig describes `streamer eval`.
type EvalConfig struct {
	Data string // a recorded stream: JSONL in the example schema, or LIBSVM
	// LabelRate is the probability that an example's true label is
	// revealed; LabelDelay the number of examples after which it is.
	LabelRate  float64
	LabelDelay int
	// Seed is the seed of the labels revealed. Seeds > 0 runs the seeds
	// 1..Seeds instead, one after the other, and reports each figure as
	// their mean and standard deviation.
	Seed  uint64
	Seeds int
	// Test is an optional labeled file, read with the same decoder as Data,
	// on which the models in force of both learners are scored at the end
	// of the stream and, when TestEvery > 0, every TestEvery examples.
	Test      string
	TestEvery int
	// ArrivalStep is the number of examples between two points of the
	// all-examples curves; 0 means 100.
	ArrivalStep int
	// Progress, when set, is called after every example, on the goroutine
	// that runs Eval.
	Progress func(EvalProgress)
	Pipeline pipeline.Config
	// Active plays the labelers of the learner's label requests instead
	// of revealing labels at random: the budget is LabelRate of the
	// examples (Pipeline.Requests.Budget is set to it), and each request
	// is answered LabelDelay examples later; a drift alarm does not raise
	// that budget (Pipeline.Drift.Ask is off) unless AskOnAlarm is set,
	// when the run spends the extra labels the ask reaction asks for.
	// CompareRandom also runs the random reveals of every seed, reported
	// as EvalReport.Random.
	Active        bool
	AskOnAlarm    bool
	CompareRandom bool
	// ReviewPrecision, when positive, routes predictions to review for
	// that target precision (online.ReviewConfig) and reports the share
	// decided automatically and their precision (SeedReport.Review).
	ReviewPrecision float64
}

// EvalProgress is where an Eval run stands.
type EvalProgress struct {
	Seed         uint64
	Run, Runs    int // this seed's run, from 1, of Runs
	Examples     int // examples of this run so far
	Total        int // records in the file (bad ones included): a run's length
	ModelVersion uint64
	Solves       int64 // of this run so far
}

// pendingLabel is a label to reveal once `at` examples were seen.
type pendingLabel struct {
	at    int
	label ingest.Label
}

// Eval replays cfg.Data through the core loop once per label seed and
// summarizes the runs (see EvalReport). In each run every example is
// scored on arrival (its label withheld), its true label is revealed with
// probability LabelRate LabelDelay examples later, and re-solves run
// synchronously whenever they are due, so that the result is
// deterministic. Bad records are counted and skipped.
func Eval(ctx context.Context, cfg EvalConfig) (EvalReport, error) {
	start := time.Now()
	seeds := evalSeeds(cfg)
	var test []ingest.Record
	if cfg.Test != "" {
		var err error
		if test, err = readTestSet(cfg.Test, cfg.Pipeline.Decoder); err != nil {
			return EvalReport{}, err
		}
	}
	total, err := countLines(cfg.Data)
	if err != nil {
		return EvalReport{}, err
	}
	runs := make([]SeedReport, 0, len(seeds))
	var random []SeedReport
	var examples, bad int
	passes := 1
	if cfg.Active && cfg.CompareRandom {
		passes = 2
	}
	for k, seed := range seeds {
		for pass := range passes {
			run := evalRun{cfg: cfg, seed: seed, index: passes*k + pass + 1, runs: passes * len(seeds), total: total, test: test}
			run.cfg.Active = cfg.Active && pass == 0
			r, err := run.eval(ctx)
			if err != nil {
				return EvalReport{}, fmt.Errorf("seed %d: %w", seed, err)
			}
			if pass == 0 {
				runs = append(runs, r)
			} else {
				random = append(random, r)
			}
			examples, bad = run.examples, run.bad
		}
	}
	rep := summarize(runs)
	rep.Examples, rep.BadRecords = examples, bad
	if cfg.Active {
		rep.Strategy = "active"
	}
	if len(random) > 0 {
		rr := summarize(random)
		rr.Examples, rr.BadRecords, rr.Strategy = examples, bad, "random"
		rr.Algorithm = string(cfg.Pipeline.Learner.Params.Algorithm)
		rep.Random = &rr
		rep.ActiveGain, rep.ActiveGainStd = activeGain(runs, random)
	}
	rep.Algorithm = string(cfg.Pipeline.Learner.Params.Algorithm)
	rep.Test, rep.TestRows = cfg.Test, len(test)
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// evalSeeds returns the label seeds of cfg.
func evalSeeds(cfg EvalConfig) []uint64 {
	if cfg.Seeds <= 0 {
		return []uint64{cfg.Seed}
	}
	seeds := make([]uint64, cfg.Seeds)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return seeds
}

// evalRun is one pass over the stream with one label seed.
type evalRun struct {
	cfg             EvalConfig
	seed            uint64
	index, runs     int
	total           int
	test            []ingest.Record
	pipe            *pipeline.Pipeline
	rand            *rand.Rand
	queue           []pendingLabel
	ssl, supervised *arrivals
	// truth holds the file's label of every example seen, for the answers
	// to label requests (EvalConfig.Active).
	truth         map[string]string
	rep           SeedReport
	examples, bad int
	testCurve     []TestPoint
	spentCurve    []SpentPoint
	review        *reviewTally // with ReviewPrecision
}

// clock is the time of an active run: a second per example, so that a
// request's expiry is a number of examples.
func (e *evalRun) clock() time.Time { return time.Unix(int64(e.examples), 0).UTC() }

// answer plays the labelers: it takes the requests the budget allows now
// and reveals their labels LabelDelay examples later.
func (e *evalRun) answer() {
	for _, req := range e.pipe.Requests(e.clock()) {
		truth, ok := e.truth[req.ID]
		if !ok {
			continue
		}
		e.queue = append(e.queue, pendingLabel{at: e.examples + e.cfg.LabelDelay, label: ingest.Label{ID: req.ID, Label: truth}})
		e.rep.LabelsRevealed++
	}
}

// spent adds a point to the curve of every-example accuracy against the
// labels spent, at the all-examples curve's last point.
func (e *evalRun) spent() {
	c := e.ssl.curve
	if len(c) == 0 {
		return
	}
	if n := len(e.spentCurve); n > 0 && e.spentCurve[n-1].Examples == c[len(c)-1].Examples {
		e.spentCurve[n-1].Labels = e.rep.LabelsRevealed
		return
	}
	e.spentCurve = append(e.spentCurve, SpentPoint{Examples: c[len(c)-1].Examples, Labels: e.rep.LabelsRevealed, AllAccuracy: c[len(c)-1].Accuracy})
}

func (e *evalRun) eval(ctx context.Context) (SeedReport, error) {
	start := time.Now()
	cfg := e.cfg
	cfg.Pipeline.Baseline = true
	cfg.Pipeline.Requests.Budget = active.Budget{}
	if cfg.Active {
		cfg.Pipeline.Requests.Budget = active.Budget{Fraction: cfg.LabelRate}
		// The labelers answer as many requests as random reveals would
		// give: an alarm raises their budget only when asked to.
		cfg.Pipeline.Drift.Ask = cfg.Pipeline.Drift.Ask && cfg.AskOnAlarm
		cfg.Pipeline.Requests.Seed = e.seed
		cfg.Pipeline.Clock = e.clock
		e.truth = map[string]string{}
	}
	if cfg.ReviewPrecision > 0 {
		cfg.Pipeline.Learner.Review.TargetPrecision = cfg.ReviewPrecision
		e.review = &reviewTally{}
	}
	var err error
	if e.pipe, err = pipeline.New(cfg.Pipeline); err != nil {
		return SeedReport{}, err
	}
	e.rand = rand.New(rand.NewPCG(e.seed, 0x5bd1e995))
	e.ssl, e.supervised = newArrivals(cfg.ArrivalStep, e.total), newArrivals(cfg.ArrivalStep, e.total)
	e.rep.Seed = e.seed
	dec := cfg.Pipeline.Decoder
	bad, err := eachRecord(cfg.Data, &dec, func(rec ingest.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return e.example(ctx, rec)
	})
	e.bad += bad
	if err != nil {
		return e.rep, err
	}
	e.finish()
	e.rep.Seconds = time.Since(start).Seconds()
	return e.rep, nil
}

// example scores one example, schedules its label, reveals the labels
// that are due, solves when a solve is due and scores the test set at its
// checkpoints.
func (e *evalRun) example(ctx context.Context, rec ingest.Record) error {
	ex := rec.Example
	truth, labeled := ex.Label, ex.Labeled
	ex.Label, ex.Labeled = "", false
	src := pipeline.Source{Topic: "examples", Offset: int64(rec.Line)}
	out, stored, err := e.pipe.Arrival(ex, src)
	if err != nil {
		e.bad++
		return nil
	}
	e.examples++
	if labeled {
		if e.review != nil {
			e.review.add(stored.Class, out.Review, stored.Prob, stored.Class == truth)
		}
		points := len(e.ssl.curve)
		e.ssl.add(stored.Class, truth, e.examples)
		e.supervised.add(stored.Baseline, truth, e.examples)
		if len(e.ssl.curve) > points {
			e.spent()
		}
		if e.truth != nil {
			e.truth[ex.ID] = truth
		} else if e.rand.Float64() < e.cfg.LabelRate {
			e.queue = append(e.queue, pendingLabel{at: e.examples + e.cfg.LabelDelay, label: ingest.Label{ID: ex.ID, Label: truth}})
			e.rep.LabelsRevealed++
		}
	}
	e.reveal()
	if e.pipe.Due() {
		if rep, err := e.pipe.Solve(ctx); err == nil {
			e.rep.Solves++
			e.logSolve(rep)
		} else if !pipeline.IsSkip(err) {
			return fmt.Errorf("solve after %d examples: %w", e.examples, err)
		}
	}
	e.answer()
	if e.cfg.TestEvery > 0 && e.examples%e.cfg.TestEvery == 0 {
		e.checkpoint()
	}
	e.progress()
	return nil
}

// reveal joins the queued labels that are due.
func (e *evalRun) reveal() {
	k := 0
	for k < len(e.queue) && e.queue[k].at <= e.examples {
		e.pipe.Label(e.queue[k].label, pipeline.Source{Topic: "labels", Offset: int64(e.queue[k].at)})
		k++
	}
	e.queue = e.queue[k:]
}

// checkpoint scores the models in force on the test set.
func (e *evalRun) checkpoint() {
	if e.test == nil || len(e.testCurve) > 0 && e.testCurve[len(e.testCurve)-1].Examples == e.examples {
		return
	}
	ssl := e.pipe.Learner().InForce().Model
	sup := e.pipe.Baseline().InForce().Model
	a, b := scoreTestSet(ssl, e.test), scoreTestSet(sup, e.test)
	e.testCurve = append(e.testCurve, TestPoint{
		Examples: e.examples, SSLAccuracy: a.Accuracy(), SSLMacroF1: a.MacroF1(),
		SupervisedAccuracy: b.Accuracy(), SupervisedMacroF1: b.MacroF1(),
	})
}

func (e *evalRun) progress() {
	if e.cfg.Progress == nil {
		return
	}
	version := e.pipe.Learner().InForce().Stamp.Version
	e.cfg.Progress(EvalProgress{
		Seed: e.seed, Run: e.index, Runs: e.runs, Examples: e.examples, Total: e.total,
		ModelVersion: version, Solves: e.rep.Solves,
	})
}

// finish scores the labels still queued (they arrive after the stream,
// too late to train on) and the final models, and fills the report.
func (e *evalRun) finish() {
	for _, p := range e.queue {
		e.pipe.Label(p.label, pipeline.Source{Topic: "labels"})
	}
	e.queue = nil
	st := e.pipe.Stats()
	r := &e.rep
	r.SSL = Scores{Accuracy: st.SSL.Accuracy(), MacroF1: st.SSL.MacroF1()}
	r.Supervised = Scores{Accuracy: st.Baseline.Accuracy(), MacroF1: st.Baseline.MacroF1()}
	e.ssl.fill(&r.SSL, e.examples)
	e.supervised.fill(&r.Supervised, e.examples)
	r.SolveSeconds, r.Unscored = st.SolveSeconds, st.Unscored
	r.NoModel, r.SupervisedNoModel = e.ssl.noModel, e.supervised.noModel
	r.Curve, r.BaselineCurve = e.pipe.Curves()
	r.AllCurve, r.SupervisedAllCurve = e.ssl.curve, e.supervised.curve
	r.Tenths = e.tenths()
	r.Alarms = []AlarmRecord{}
	for _, a := range e.pipe.Alarms() {
		r.Alarms = append(r.Alarms, AlarmRecord{Examples: a.Examples, Detector: a.Detector, Statistic: a.Statistic, Threshold: a.Threshold,
			Reactions: a.Reactions, Classes: a.Classes, SwitchedFrom: string(a.SwitchedFrom), SwitchedTo: string(a.SwitchedTo)})
	}
	e.spent()
	r.SpentCurve = e.spentCurve
	if st, ok := e.pipe.RequestStats(); ok {
		r.Requests = requestCounts(st)
	}
	if e.review != nil {
		rs := e.review.scores(e.cfg.ReviewPrecision)
		r.Review = &rs
	}
	if e.test != nil {
		e.checkpoint()
		last := e.testCurve[len(e.testCurve)-1]
		r.SSL.TestAccuracy, r.SSL.TestMacroF1 = &last.SSLAccuracy, &last.SSLMacroF1
		r.Supervised.TestAccuracy, r.Supervised.TestMacroF1 = &last.SupervisedAccuracy, &last.SupervisedMacroF1
		if e.cfg.TestEvery > 0 {
			r.TestCurve = e.testCurve
		}
	}
}

// logSolve records a solve of the semi-supervised learner.
func (e *evalRun) logSolve(rep online.SolveReport) {
	e.rep.SolveLog = append(e.rep.SolveLog, SolveRecord{
		Examples: e.examples, Version: rep.Version, Algorithm: string(rep.Algorithm), Lambda: rep.Lambda, LabelHalfLife: rep.LabelHalfLife, Trial: rep.Trial,
		KernelRank: rep.KernelRank, Window: rep.Window, Labeled: rep.Labeled, Classes: rep.Classes,
		LabeledEdges: rep.LabeledEdges, AgreeingEdges: rep.AgreeingEdges, VoteWeight: rep.VoteWeight,
		Seconds: rep.Seconds,
	})
}

// tenths returns the run's scores tenth by tenth.
func (e *evalRun) tenths() []Tenth {
	var out []Tenth
	for i, t := range e.ssl.tenths {
		if t.total == 0 {
			continue
		}
		b := e.supervised.tenths[i]
		out = append(out, Tenth{
			Examples: t.last, SSLAccuracy: float64(t.right) / float64(t.total),
			SupervisedAccuracy: float64(b.right) / float64(max(b.total, 1)), NoModel: t.noModel,
		})
	}
	return out
}
