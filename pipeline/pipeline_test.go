package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/online/train"
	"streamer/synth"
)

func TestPrequentialScores(t *testing.T) {
	p := NewPrequential(3, 2)
	p.Add("", "a", 1) // no model yet: not scored
	for _, c := range [][2]string{{"a", "a"}, {"b", "a"}, {"b", "b"}, {"a", "a"}, {"a", "b"}} {
		p.Add(c[0], c[1], 10)
	}
	tot := p.Total()
	if tot.Total != 5 || tot.Correct != 3 || p.Unscored() != 1 {
		t.Fatalf("total %+v, unscored %d", tot, p.Unscored())
	}
	// class a: tp 2, fp 1, fn 1 -> F1 = 4/6; class b: tp 1, fp 1, fn 1 -> 2/4.
	if want := (4.0/6 + 2.0/4) / 2; math.Abs(tot.MacroF1()-want) > 1e-12 {
		t.Fatalf("macro-F1 %v, want %v", tot.MacroF1(), want)
	}
	if r := p.Recent(); r.Total != 3 || r.Correct != 2 {
		t.Fatalf("recent %+v, want the last 3 with 2 correct", r)
	}
	if c := p.Curve(); len(c) != 2 || c[0].Labels != 2 || c[1].Labels != 4 {
		t.Fatalf("curve %+v", c)
	}
}

// TestScoreAddCountsMissingPredictionsWrong checks Score.Add against counts
// worked out by hand: a missing prediction is a false negative of its
// class and a false positive of none.
func TestScoreAddCountsMissingPredictionsWrong(t *testing.T) {
	tests := []struct {
		name     string
		pairs    [][2]string // prediction, truth
		accuracy float64
		macroF1  float64
	}{
		{"all missing", [][2]string{{"", "a"}, {"", "b"}}, 0, 0},
		// a: tp 1, fn 1 -> 2/3; b: tp 1 -> 1.
		{"one missing", [][2]string{{"a", "a"}, {"", "a"}, {"b", "b"}}, 2.0 / 3, (2.0/3 + 1) / 2},
		// a: tp 1, fp 1 -> 2/3; b: fn 2 -> 0.
		{"missing and wrong", [][2]string{{"a", "a"}, {"a", "b"}, {"", "b"}}, 1.0 / 3, (2.0 / 3) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewScore()
			for _, p := range tt.pairs {
				s.Add(p[0], p[1])
			}
			if s.Total != len(tt.pairs) || math.Abs(s.Accuracy()-tt.accuracy) > 1e-12 || math.Abs(s.MacroF1()-tt.macroF1) > 1e-12 {
				t.Fatalf("total %d accuracy %v macro-F1 %v; want %d %v %v", s.Total, s.Accuracy(), s.MacroF1(), len(tt.pairs), tt.accuracy, tt.macroF1)
			}
		})
	}
}

func testPipeline(t *testing.T, baseline bool) *Pipeline {
	t.Helper()
	p, err := New(Config{
		Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
		Learner: online.LearnerConfig{
			Features:      1 << 14,
			Window:        anngraph.Config{MaxExamples: 200, K: 5},
			Params:        train.Params{Algorithm: train.TSVM, LambdaU: 0.1},
			SolveExamples: 50, SolveLabels: 5,
		},
		Baseline: baseline,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func decoded(t *testing.T, p *Pipeline, d synth.Document, withLabel bool) ingest.Example {
	t.Helper()
	label := ""
	if withLabel {
		label = fmt.Sprintf(`, "label": %q`, d.Label)
	}
	ex, err := p.DecodeExample([]byte(fmt.Sprintf(`{"id": %q, "text": %q%s}`, d.ID, d.Text, label)), d.TS)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// TestPipelineLearnsFromLateLabels streams examples with labels revealed
// later, and checks predictions, prequential scoring and the join.
func TestPipelineLearnsFromLateLabels(t *testing.T) {
	t.Parallel()
	p := testPipeline(t, true)
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 2, Topics: 2})
	var docs []synth.Document
	withModel := 0
	for i := range 600 {
		d := gen.Next()
		docs = append(docs, d)
		pred, err := p.Example(decoded(t, p, d, false), Source{Topic: "examples", Offset: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if pred.Label == nil && pred.Reason == "" {
			t.Fatal("a null prediction without a reason")
		}
		if pred.Label != nil {
			withModel++
		}
		if i >= 20 && i%5 == 0 { // the label of an example 20 back
			late := docs[i-20]
			if !p.Label(ingest.Label{ID: late.ID, Label: late.Label}, Source{Topic: "labels", Offset: int64(i)}) {
				t.Fatalf("label for %s did not find its example", late.ID)
			}
		}
		if p.Due() {
			if _, err := p.Solve(context.Background()); err != nil && !IsSkip(err) {
				t.Fatal(err)
			}
		}
	}
	st := p.Stats()
	if st.Examples != 600 || st.Labels != 116 || st.Solves == 0 || withModel < 400 {
		t.Fatalf("stats %+v, %d predictions with a model", st, withModel)
	}
	if st.SSL.Total == 0 || st.SSL.Accuracy() < 0.8 || st.Baseline.Total != st.SSL.Total {
		t.Fatalf("prequential: ssl %+v (%.3f), baseline %+v", st.SSL, st.SSL.Accuracy(), st.Baseline)
	}
	if st.Window != 200 {
		t.Fatalf("window %d", st.Window)
	}
}

func TestEarlyLabelWaitsForItsExample(t *testing.T) {
	p := testPipeline(t, false)
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 3})
	d := gen.Next()
	if p.Label(ingest.Label{ID: d.ID, Label: d.Label}, Source{Topic: "labels"}) {
		t.Fatal("a label joined an example never seen")
	}
	if _, err := p.Example(decoded(t, p, d, false), Source{Topic: "examples"}); err != nil {
		t.Fatal(err)
	}
	if _, labeled := p.Learner().WindowSize(); labeled != 1 {
		t.Fatalf("%d labeled examples in the window, want the early label joined", labeled)
	}
	if joined := p.Stats().Joined; joined != 1 {
		t.Fatalf("%d labels joined after the early one met its example, want 1", joined)
	}
	late := gen.Next()
	if _, err := p.Example(decoded(t, p, late, false), Source{Topic: "examples", Offset: 1}); err != nil {
		t.Fatal(err)
	}
	if !p.Label(ingest.Label{ID: late.ID, Label: late.Label}, Source{Topic: "labels", Offset: 1}) {
		t.Fatal("a late label did not find its example")
	}
	if joined := p.Stats().Joined; joined != 2 {
		t.Fatalf("%d labels joined after an early and a late one, want 2", joined)
	}
}

func TestPositionsTrackTheWindow(t *testing.T) {
	p := testPipeline(t, false)
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 4})
	for i := range 500 {
		d := gen.Next()
		if _, err := p.Example(decoded(t, p, d, i%7 == 0), Source{Topic: "examples", Partition: i % 2, Offset: int64(i / 2)}); err != nil {
			t.Fatal(err)
		}
	}
	pos := p.Positions()
	if len(pos) != 2 {
		t.Fatalf("positions %+v", pos)
	}
	for _, ps := range pos {
		// The window keeps the last 200 examples: 100 per partition.
		if ps.Next != 250 || ps.Start != 150 {
			t.Fatalf("partition %d: start %d next %d, want 150 and 250", ps.Partition, ps.Start, ps.Next)
		}
	}
}

// TestRefusedRecordsMoveThePosition checks that a dead-lettered record
// counts as read: Next moves past it, and it holds back no Start.
func TestRefusedRecordsMoveThePosition(t *testing.T) {
	p := testPipeline(t, false)
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 4})
	d := gen.Next()
	if _, err := p.Example(decoded(t, p, d, true), Source{Topic: "examples", Offset: 0}); err != nil {
		t.Fatal(err)
	}
	p.Label(ingest.Label{ID: d.ID, Label: d.Label}, Source{Topic: "labels", Partition: 1, Offset: 4})
	p.ExampleRefused(Source{Topic: "examples", Offset: 1})
	p.LabelRefused(Source{Topic: "labels", Partition: 1, Offset: 5})
	p.LabelRefused(Source{Topic: "labels", Partition: 2, Offset: 9})
	want := []Position{
		{Topic: "examples", Partition: 0, Start: 0, Next: 2},
		{Topic: "labels", Partition: 1, Start: 4, Next: 6},
		{Topic: "labels", Partition: 2, Start: 10, Next: 10},
	}
	if got := p.Positions(); !slices.Equal(got, want) {
		t.Fatalf("positions %+v, want %+v", got, want)
	}
}

// TestScoreLearnsNothing checks that Score answers what Example would with
// the same model, and moves nothing: window, join, counts, solve trigger.
func TestScoreLearnsNothing(t *testing.T) {
	p := testPipeline(t, false)
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 5, Topics: 2})
	probe := decoded(t, p, gen.Next(), true)
	if _, err := p.Score([]ingest.Example{probe}, Source{Topic: "http"}); !errors.Is(err, ErrNoModel) || err.Error() != p.noModelReason() {
		t.Fatalf("before a model: %v", err)
	}
	for i := range 300 {
		if _, err := p.Example(decoded(t, p, gen.Next(), i%4 == 0), Source{Topic: "examples", Offset: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, progress := p.Stats(), p.Progress()
	got, err := p.Score([]ingest.Example{probe, probe}, Source{Topic: "http"})
	if err != nil || len(got) != 2 {
		t.Fatalf("Score: %v, %d predictions", err, len(got))
	}
	if p.Learner().Contains(probe.ID) || !reflect.DeepEqual(p.Stats(), before) || !reflect.DeepEqual(p.Progress(), progress) || p.Due() {
		t.Fatalf("Score moved the pipeline: %+v\nbefore: %+v", p.Stats(), before)
	}
	want, err := p.Example(probe, Source{Topic: "http"})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if !reflect.DeepEqual(g, want) {
			t.Fatalf("Score %+v, Example %+v", g, want)
		}
	}
}

// TestRefusalReasons: every reason RefusalReason gives is among
// RefusalReasons, the decoder's first.
func TestRefusalReasons(t *testing.T) {
	all := map[string]bool{}
	for _, r := range RefusalReasons() {
		all[r] = true
	}
	for _, err := range []error{
		&ingest.DecodeError{Reason: ingest.ReasonMissingID, Err: errors.New("no id")},
		fmt.Errorf("example: %w", online.ErrIncompatible),
		errors.New("something else"),
	} {
		if r := RefusalReason(err); !all[r] {
			t.Errorf("RefusalReason(%v) = %q, not among RefusalReasons", err, r)
		}
	}
	if r := RefusalReason(&ingest.DecodeError{Reason: ingest.ReasonMissingID, Err: errors.New("no id")}); r != "missing_id" {
		t.Errorf("a decode error's reason is %q, want missing_id", r)
	}
}
