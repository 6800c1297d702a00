package pipeline

import (
	"context"
	"slices"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/online/active"
	"streamer/online/drift"
	"streamer/online/review"
	"streamer/online/train"
	"streamer/synth"
)

// TestAnswersToChosenRequestsAreMarked: a label that answers a request
// chosen for what it would teach is marked chosen in the window, so that
// solves do not take the classes' shares from it; a label that answers a
// random request, or that came unasked, is not.
func TestAnswersToChosenRequestsAreMarked(t *testing.T) {
	p, err := New(Config{
		Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
		Learner: online.LearnerConfig{
			Features: 1 << 14, Window: anngraph.Config{MaxExamples: 2000, K: 5},
			Params: train.Params{Algorithm: train.SVM}, SolveExamples: 1 << 20,
		},
		Requests: active.Config{Budget: active.Budget{Fraction: 0.05}, RandomShare: 0.5, Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 4, Topics: 3})
	docs := map[string]synth.Document{}
	var requests []LabelRequest
	for i := range 600 {
		d := gen.Next()
		docs[d.ID] = d
		if _, err := p.Example(decoded(t, p, d, false), Source{Topic: "examples", Offset: int64(i)}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			requests = append(requests, p.Requests(time.Unix(int64(i), 0))...)
		}
	}
	strategies := map[string]int{}
	requested := map[string]bool{}
	for k, r := range requests {
		p.Label(ingest.Label{ID: r.ID, Label: docs[r.ID].Label}, Source{Topic: "labels", Offset: int64(k)})
		requested[r.ID] = true
		if chosen := r.Reason.Strategy != active.StrategyRandom; p.learner.IsChosen(r.ID) != chosen {
			t.Errorf("%s request %s answered: marked chosen %v, want %v", r.Reason.Strategy, r.ID, !chosen, chosen)
		}
		strategies[r.Reason.Strategy]++
	}
	t.Logf("requests by strategy %v", strategies)
	if strategies[active.StrategyRandom] == 0 || len(requests) == strategies[active.StrategyRandom] {
		t.Fatalf("requests by strategy %v: the test needs both random and chosen ones", strategies)
	}
	for id, d := range docs {
		if requested[id] {
			continue
		}
		p.Label(ingest.Label{ID: id, Label: d.Label}, Source{Topic: "labels"})
		if p.learner.IsChosen(id) {
			t.Fatalf("an unasked label of %s is marked chosen", id)
		}
		break
	}
}

// TestChosenAnswersFeedNeitherDriftNorReview: answers to chosen requests
// are hard examples by design, so neither the labels detector nor the
// choice of review thresholds counts them. Here the labelers contradict
// the model on every chosen request: a pipeline that got the same labels
// unasked alarms and sends every prediction to review; the one that
// asked for them does neither.
func TestChosenAnswersFeedNeitherDriftNorReview(t *testing.T) {
	t.Parallel()
	newPipeline := func(requests active.Config) *Pipeline {
		p, err := New(Config{
			Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
			Learner: online.LearnerConfig{
				Features: 1 << 14, Window: anngraph.Config{MaxExamples: 2000, K: 5},
				Params: train.Params{Algorithm: train.SVM}, SolveExamples: 50, SolveLabels: 5,
				Review: online.ReviewConfig{TargetPrecision: 0.9},
			},
			Requests: requests,
			Drift:    DriftConfig{Detectors: drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	asking := newPipeline(active.Config{Budget: active.Budget{Fraction: 0.1}, RandomShare: 0.2, Seed: 1})
	unasked := newPipeline(active.Config{})
	both := []*Pipeline{asking, unasked}

	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 5, Topics: 2})
	var docs []synth.Document
	byID := map[string]synth.Document{}
	classes := map[string]bool{}
	other := func(l string) string {
		for c := range classes {
			if c != l {
				return c
			}
		}
		return l
	}
	label := func(l ingest.Label, offset int) {
		for _, p := range both {
			p.Label(l, Source{Topic: "labels", Offset: int64(offset)})
		}
	}
	contradicted := 0
	for i := range 2000 {
		d := gen.Next()
		docs, byID[d.ID], classes[d.Label] = append(docs, d), d, true
		for _, p := range both {
			if _, err := p.Example(decoded(t, p, d, false), Source{Topic: "examples", Offset: int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case i < 600 && i >= 20 && i%5 == 0: // unasked labels, right, build the detector's reference
			late := docs[i-20]
			label(ingest.Label{ID: late.ID, Label: late.Label}, i)
		case i >= 600 && i%50 == 0:
			for _, r := range asking.Requests(time.Unix(int64(i), 0)) {
				answer := byID[r.ID].Label
				if r.Reason.Strategy != active.StrategyRandom {
					answer = other(answer)
					contradicted++
				}
				label(ingest.Label{ID: r.ID, Label: answer}, i)
			}
		}
		for _, p := range both {
			if p.Due() {
				if _, err := p.Solve(context.Background()); err != nil && !IsSkip(err) {
					t.Fatal(err)
				}
			}
		}
	}
	if contradicted < 50 {
		t.Fatalf("%d chosen requests answered: the test needs more", contradicted)
	}
	if a := unasked.Alarms(); len(a) == 0 {
		t.Fatalf("the same %d wrong labels, unasked, raised no alarm: the test shows nothing", contradicted)
	}
	if a := asking.Alarms(); len(a) > 0 {
		t.Errorf("answers to chosen requests raised alarms %+v", a)
	}
	askingTh, unaskedTh := asking.Learner().InForce().Thresholds, unasked.Learner().InForce().Thresholds
	if !slices.Contains(unaskedTh, review.ReviewAll) {
		t.Fatalf("the same wrong labels, unasked, left thresholds %v that decide every class: the test shows nothing", unaskedTh)
	}
	if slices.Contains(askingTh, review.ReviewAll) {
		t.Errorf("answers to chosen requests send every prediction of a class to review: thresholds %v", askingTh)
	}
	t.Logf("%d chosen requests contradicted; unasked: %d alarms, thresholds %v; asking: %d alarms, thresholds %v",
		contradicted, len(unasked.Alarms()), unaskedTh, len(asking.Alarms()), askingTh)
}
