package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/online/review"
	"streamer/online/train"
	"streamer/snapshot"
	"streamer/synth"
)

// textPipeline returns a pipeline over short texts of two classes, solved
// once on labeled examples; cfg.Decoder.Examples, when set, must read
// {"id", "label", "text"}.
func textPipeline(t *testing.T, cfg Config) *Pipeline {
	t.Helper()
	cfg.Decoder = ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 12}, Examples: cfg.Decoder.Examples}
	cfg.Learner = online.LearnerConfig{Features: 1 << 12, Window: anngraph.Config{MaxExamples: 500}, Review: cfg.Learner.Review}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]string{"spam": "free money winner cash prize", "ham": "meeting agenda notes project lunch"}
	for i := range 60 {
		class := []string{"spam", "ham"}[i%2]
		raw := fmt.Sprintf(`{"id":"e%d","label":%q,"text":"%s number %d"}`, i, class, words[class], i)
		ex, err := p.DecodeExample([]byte(raw), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Example(ex, Source{Topic: "examples", Offset: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExplanationAddsUpAndNamesWords: an explained prediction's bias,
// terms and rest add up to its class's score, and its terms carry the
// words of the example that hash there, in the default schema and in a
// mapping of two text fields and a named number.
func TestExplanationAddsUpAndNamesWords(t *testing.T) {
	mapping := &ingest.ExampleMapping{
		ID: ingest.MustPointer("/id"), Label: ingest.MustPointer("/label"),
		Text:             []ingest.Pointer{ingest.MustPointer("/title"), ingest.MustPointer("/text")},
		Fields:           []ingest.FeatureField{{Name: "followers", At: ingest.MustPointer("/followers")}},
		TextWithFeatures: true,
	}
	for _, tc := range []struct {
		name    string
		mapping *ingest.ExampleMapping
		raw     string
	}{
		{"default schema", nil, `{"id":"x","text":"free cash for the project"}`},
		{"mapping", mapping, `{"id":"x","title":"free cash","text":"for the project","followers":3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := textPipeline(t, Config{Explain: 3, Decoder: ingest.Decoder{Examples: tc.mapping}})
			ex, err := p.DecodeExample([]byte(tc.raw), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			pred, err := p.Example(ex, Source{Topic: "examples", Offset: 100})
			if err != nil {
				t.Fatal(err)
			}
			checkExplanation(t, pred)
			plain, err := p.ScoreExplained([]ingest.Example{ex}, Source{Topic: "http"}, 0)
			if err != nil || plain[0].Explanation != nil {
				t.Fatalf("explain 0: %+v, %v", plain[0].Explanation, err)
			}
		})
	}
}

// checkExplanation checks that pred's explanation has three named terms,
// which with its bias and rest add up to the predicted class's score.
func checkExplanation(t *testing.T, pred Prediction) {
	t.Helper()
	e := pred.Explanation
	if e == nil || len(e.Terms) != 3 || e.Class != *pred.Label || e.Space != "features" {
		t.Fatalf("explanation %+v of %s", e, *pred.Label)
	}
	sum := e.Bias + e.Rest
	for _, term := range e.Terms {
		sum += term.Contribution
		if len(term.Names) == 0 {
			t.Errorf("term %d has no name", term.Index)
		}
	}
	if math.Abs(sum-e.Score) > 1e-9 || math.Abs(e.Score-pred.Scores[*pred.Label]) > 1e-12 {
		t.Fatalf("bias + terms + rest = %v, explanation's score %v, prediction's %v", sum, e.Score, pred.Scores[*pred.Label])
	}
}

// TestReviewRouting: a fixed threshold routes the predictions of its
// class below it; a target precision without graded predictions reviews
// all; neither reviews none.
func TestReviewRouting(t *testing.T) {
	ex := ingest.Example{ID: "x"}
	inf := math.Inf(1)
	for _, tc := range []struct {
		name       string
		cfg        Config
		review     func(label string, prob float64) bool
		thresholds map[string]float64
	}{
		{"none", Config{}, func(string, float64) bool { return false }, nil},
		{"fixed", Config{Review: ReviewConfig{Thresholds: map[string]float64{"spam": 1}}}, func(label string, _ float64) bool { return label == "spam" }, map[string]float64{"spam": 1}},
		{"target, no grades", Config{Learner: online.LearnerConfig{Review: online.ReviewConfig{TargetPrecision: 0.9}}}, func(string, float64) bool { return true }, map[string]float64{"spam": inf, "ham": inf}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := textPipeline(t, tc.cfg)
			if got := p.ReviewThresholds(); !maps.Equal(got, tc.thresholds) {
				t.Errorf("thresholds %v, want %v", got, tc.thresholds)
			}
			for _, text := range []string{"free money", "meeting notes"} {
				d := ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 12}}
				e, err := d.DecodeExample([]byte(fmt.Sprintf(`{"id":"x","text":%q}`, text)))
				if err != nil {
					t.Fatal(err)
				}
				ex.Vector = e.Vector
				preds, err := p.Score([]ingest.Example{ex}, Source{})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := preds[0].Review, tc.review(*preds[0].Label, *preds[0].Prob); got != want {
					t.Errorf("%q predicted %s (%.3f): review %v, want %v", text, *preds[0].Label, *preds[0].Prob, got, want)
				}
			}
		})
	}
}

// TestExplanationsBesideTheStream scores with explanations from several
// goroutines while the stream is learned and solved, graded and
// re-thresholded (run with -race): over a kNN graph of three classes the
// explanations name labeled neighbours, and their terms add up.
func TestExplanationsBesideTheStream(t *testing.T) {
	t.Parallel()
	rows, class := synth.Clusters(synth.ClusterConfig{Points: 600, Dim: 8, Clusters: 3, Seed: 3})
	p, err := New(Config{
		Decoder: ingest.Decoder{},
		Learner: online.LearnerConfig{Features: 8, Window: anngraph.Config{MaxExamples: 600, Metric: anngraph.Euclidean},
			Params: train.Params{Algorithm: train.Auto}, Review: online.ReviewConfig{TargetPrecision: 0.9}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var explained atomic.Int64 // explanations with neighbours, scored beside the stream
	for range 2 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				preds, err := p.ScoreExplained([]ingest.Example{{ID: "q", Vector: rows[i%len(rows)]}}, Source{}, 3)
				if err != nil {
					continue
				}
				e := preds[0].Explanation
				sum := e.Bias + e.Rest
				for _, term := range e.Terms {
					sum += term.Contribution
				}
				if math.Abs(sum-e.Score) > 1e-9*max(1, math.Abs(e.Score)) {
					t.Errorf("bias + terms + rest %v, score %v", sum, e.Score)
					return
				}
				if len(e.Neighbours) > 0 {
					explained.Add(1)
				}
				// Now and then, not flat out: two goroutines spinning
				// would hold both cores from the stream and the suite.
				time.Sleep(200 * time.Microsecond)
			}
		})
	}
	for i, x := range rows {
		ex := ingest.Example{ID: fmt.Sprint(i), Vector: x}
		if i%4 == 0 {
			ex.Label, ex.Labeled = fmt.Sprint(class[i]), true
		}
		if _, err := p.Example(ex, Source{Offset: int64(i)}); err != nil {
			t.Fatal(err)
		}
		if p.Due() {
			if _, err := p.Solve(ctx); err != nil && !IsSkip(err) {
				t.Fatal(err)
			}
		}
	}
	cancel()
	wg.Wait()
	preds, err := p.ScoreExplained([]ingest.Example{{ID: "q", Vector: rows[0]}}, Source{}, 3)
	if err != nil || len(preds[0].Explanation.Neighbours) != 3 {
		t.Fatalf("after the stream: %v, %+v", err, preds)
	}
	if explained.Load() == 0 {
		t.Fatal("no explanation named a labeled neighbour")
	}
	if in := p.Learner().InForce(); len(in.Thresholds) != 3 || in.ThresholdsTarget != 0.9 {
		t.Fatalf("thresholds %v for %v, want one per class for 0.9", in.Thresholds, in.ThresholdsTarget)
	}
}

// TestRestoredModelRoutesByItsThresholds: a model put in force from a
// snapshot routes its predictions by the thresholds it was published
// with when they were chosen for this target precision, and all of them
// to review otherwise.
func TestRestoredModelRoutesByItsThresholds(t *testing.T) {
	target := online.ReviewConfig{TargetPrecision: 0.9}
	solved := textPipeline(t, Config{Learner: online.LearnerConfig{Review: target}}).Learner().InForce()
	// The first class is never reviewed, the second always.
	published := snapshot.Thresholds{0, review.ReviewAll}
	for _, tc := range []struct {
		name       string
		thresholds snapshot.Thresholds
		target     float64
		review     func(class string) bool
	}{
		{"published for this target", published, 0.9, func(class string) bool { return class == solved.Model.Classes[1] }},
		{"published for another target", published, 0.8, func(string) bool { return true }},
		{"published without thresholds", nil, 0, func(string) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := snapshot.Encode(&snapshot.Snapshot{
				Name: "m", Version: 3, Model: *solved.Model, ReviewThresholds: tc.thresholds, ReviewTargetPrecision: tc.target,
			})
			if err != nil {
				t.Fatal(err)
			}
			snap, err := snapshot.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 12}},
				Learner: online.LearnerConfig{Features: 1 << 12, Window: anngraph.Config{MaxExamples: 500}, Review: target}}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			p.SetModel(Restored(snap))
			want := map[string]float64{}
			for _, class := range solved.Model.Classes {
				want[class] = math.Inf(1)
				if !tc.review(class) {
					want[class] = 0
				}
			}
			if got := p.ReviewThresholds(); !maps.Equal(got, want) {
				t.Errorf("thresholds %v, want %v", got, want)
			}
			seen := map[string]bool{}
			for _, text := range []string{"free money winner", "meeting agenda notes"} {
				ex, err := p.DecodeExample([]byte(fmt.Sprintf(`{"id":"x","text":%q}`, text)), time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				preds, err := p.Score([]ingest.Example{ex}, Source{})
				if err != nil {
					t.Fatal(err)
				}
				label := *preds[0].Label
				seen[label] = true
				if got, want := preds[0].Review, tc.review(label); got != want {
					t.Errorf("%q predicted %s: review %v, want %v", text, label, got, want)
				}
			}
			if len(seen) != 2 {
				t.Fatalf("predicted %v, want both classes", seen)
			}
		})
	}
}
