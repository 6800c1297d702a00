package pipeline

import (
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/online/active"
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
