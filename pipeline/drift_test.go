package pipeline

import (
	"context"
	"slices"
	"testing"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/online/drift"
	"streamer/online/train"
	"streamer/synth"
)

func driftPipeline(t *testing.T, d DriftConfig) *Pipeline {
	t.Helper()
	p, err := New(Config{
		Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
		Learner: online.LearnerConfig{
			Features:      1 << 14,
			Window:        anngraph.Config{MaxExamples: 400, K: 5},
			Params:        train.Params{Algorithm: train.TSVM, LambdaU: 0.1},
			SolveExamples: 50, SolveLabels: 5,
		},
		Drift: d,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// swapStream streams 1,400 examples of two topics, a label for every
// fifth 20 examples later, the two classes' labels swapped from example
// 600 on. It returns the accuracy of the predictions of the 200 examples
// from 700 on.
func swapStream(t *testing.T, p *Pipeline) float64 {
	t.Helper()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 3, Topics: 2})
	var docs []synth.Document
	classes := map[string]bool{}
	swap := func(l string) string {
		for c := range classes {
			if c != l {
				return c
			}
		}
		return l
	}
	right, scored := 0, 0
	for i := range 1400 {
		d := gen.Next()
		classes[d.Label] = true
		if i >= 600 {
			d.Label = swap(d.Label)
		}
		docs = append(docs, d)
		pred, err := p.Example(decoded(t, p, d, false), Source{Topic: "examples", Offset: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if i >= 700 && i < 900 {
			scored++
			if pred.Label != nil && *pred.Label == d.Label {
				right++
			}
		}
		if i >= 20 && i%5 == 0 {
			late := docs[i-20]
			p.Label(ingest.Label{ID: late.ID, Label: late.Label}, Source{Topic: "labels", Offset: int64(i)})
		}
		if p.Due() {
			if _, err := p.Solve(context.Background()); err != nil && !IsSkip(err) {
				t.Fatal(err)
			}
		}
	}
	return float64(right) / float64(scored)
}

// TestDriftLabelsAlarmAndForget: labels that turn against the model make
// the labels detector alarm soon after the swap, and, reacting, the
// learner forgets the labels before it and learns the new ones; without
// the reaction the alarm is the same and the model stays wrong longer.
func TestDriftLabelsAlarmAndForget(t *testing.T) {
	detectors := drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}
	var said []Alarm
	react := driftPipeline(t, DriftConfig{Detectors: detectors, Forget: true, OnAlarm: func(a Alarm) { said = append(said, a) }})
	reacted := swapStream(t, react)
	plain := driftPipeline(t, DriftConfig{Detectors: detectors})
	unreacted := swapStream(t, plain)

	alarms := react.Alarms()
	if len(alarms) == 0 || len(said) != len(alarms) {
		t.Fatalf("alarms %+v, said %d", alarms, len(said))
	}
	first := alarms[0]
	if first.Detector != drift.Labels || first.Examples < 600 || first.Examples > 800 || !slices.Equal(first.Reactions, []string{"forget", "solve"}) {
		t.Errorf("first alarm %+v; want labels between examples 600 and 800, with forget and solve", first)
	}
	if first.Model.Version == 0 || first.Time.IsZero() {
		t.Errorf("alarm without its model or time: %+v", first)
	}
	if a := plain.Alarms(); len(a) == 0 || a[0].Examples != first.Examples || len(a[0].Reactions) != 0 {
		t.Errorf("without reactions: alarms %+v", a)
	}
	if reacted < unreacted+0.1 || reacted < 0.8 {
		t.Errorf("accuracy after the swap: %.3f reacting, %.3f not; want the reaction ahead by 10 points and at 0.8 at least", reacted, unreacted)
	} else {
		t.Logf("accuracy after the swap: %.3f reacting, %.3f not; first alarm at %d", reacted, unreacted, first.Examples)
	}
	st := react.DriftStatus()
	if st.Alarms != len(alarms) || st.Last == nil || len(st.Detectors) != 3 || st.Detectors[0].On != true || st.Detectors[1].On {
		t.Errorf("status %+v", st)
	}
}

// TestDriftOff: a pipeline whose watch is off says nothing.
func TestDriftOff(t *testing.T) {
	p := driftPipeline(t, DriftConfig{Off: true})
	swapStream(t, p)
	if a := p.Alarms(); len(a) != 0 {
		t.Errorf("alarms %+v", a)
	}
	if st := p.DriftStatus(); len(st.Detectors) != 0 || st.Alarms != 0 {
		t.Errorf("status %+v", st)
	}
}
