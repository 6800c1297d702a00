package offline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"streamer/ingest"
	"streamer/pipeline"
	"streamer/publish"
)

// EvalConfig describes `streamer eval`.
type EvalConfig struct {
	Data string // a JSONL stream in the example schema (.jsonl or .jsonl.gz)
	// LabelRate is the probability that an example's true label is
	// revealed; LabelDelay the number of examples after which it is.
	LabelRate  float64
	LabelDelay int
	Seed       uint64
	Pipeline   pipeline.Config
}

// EvalReport is the result of `streamer eval`.
type EvalReport struct {
	Examples       int                   `json:"examples"`
	LabelsRevealed int                   `json:"labels_revealed"`
	SSL            Scores                `json:"ssl"`
	Supervised     Scores                `json:"supervised"`
	Solves         int64                 `json:"solves"`
	SolveSeconds   float64               `json:"solve_seconds"`
	Seconds        float64               `json:"seconds"`
	BadRecords     int                   `json:"bad_records"`
	Unscored       int                   `json:"unscored"`
	Algorithm      string                `json:"algorithm"`
	Curve          []pipeline.CurvePoint `json:"curve,omitempty"`
	BaselineCurve  []pipeline.CurvePoint `json:"supervised_curve,omitempty"`
}

// Scores are prequential scores over the revealed labels.
type Scores struct {
	Accuracy float64 `json:"accuracy"`
	MacroF1  float64 `json:"macro_f1"`
}

// pendingLabel is a label to reveal once `at` examples were seen.
type pendingLabel struct {
	at    int
	label ingest.Label
}

// Eval replays cfg.Data through the core loop: each example is scored on
// arrival (its label withheld), its true label is revealed with
// probability LabelRate LabelDelay examples later, and re-solves run
// synchronously whenever they are due, so that the result is
// deterministic. Bad records are counted and skipped.
func Eval(ctx context.Context, cfg EvalConfig) (EvalReport, error) {
	start := time.Now()
	cfg.Pipeline.Baseline = true
	pipe, err := pipeline.New(cfg.Pipeline)
	if err != nil {
		return EvalReport{}, err
	}
	dec := cfg.Pipeline.Decoder
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5bd1e995))
	var queue []pendingLabel
	rep := EvalReport{Algorithm: string(cfg.Pipeline.Learner.Params.Algorithm)}
	bad, err := eachRecord(cfg.Data, &dec, func(rec ingest.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		queue, err = evalExample(ctx, pipe, rec, r, cfg, queue, &rep)
		return err
	})
	rep.BadRecords += bad
	if err != nil {
		return rep, err
	}
	for _, p := range queue {
		pipe.Label(p.label, publish.Source{Topic: "labels"})
	}
	st := pipe.Stats()
	rep.SSL = Scores{Accuracy: st.SSL.Accuracy(), MacroF1: st.SSL.MacroF1()}
	rep.Supervised = Scores{Accuracy: st.Baseline.Accuracy(), MacroF1: st.Baseline.MacroF1()}
	rep.Solves, rep.SolveSeconds, rep.Unscored = st.Solves, st.SolveSeconds, st.Unscored
	rep.Curve, rep.BaselineCurve = pipe.Curves()
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// evalExample scores one example, schedules its label, reveals the labels
// that are due and solves when a solve is due.
func evalExample(ctx context.Context, pipe *pipeline.Pipeline, rec ingest.Record, r *rand.Rand, cfg EvalConfig, queue []pendingLabel, rep *EvalReport) ([]pendingLabel, error) {
	ex := rec.Example
	truth, labeled := ex.Label, ex.Labeled
	ex.Label, ex.Labeled = "", false
	src := publish.Source{Topic: "examples", Offset: int64(rec.Line)}
	if _, err := pipe.Example(ex, src); err != nil {
		rep.BadRecords++
		return queue, nil
	}
	rep.Examples++
	if labeled && r.Float64() < cfg.LabelRate {
		queue = append(queue, pendingLabel{at: rep.Examples + cfg.LabelDelay, label: ingest.Label{ID: ex.ID, Label: truth}})
		rep.LabelsRevealed++
	}
	k := 0
	for k < len(queue) && queue[k].at <= rep.Examples {
		pipe.Label(queue[k].label, publish.Source{Topic: "labels", Offset: int64(queue[k].at)})
		k++
	}
	queue = queue[k:]
	if pipe.Due() {
		if _, err := pipe.Solve(ctx); err != nil && !pipeline.IsSkip(err) {
			return queue, fmt.Errorf("solve after %d examples: %w", rep.Examples, err)
		}
	}
	return queue, nil
}
