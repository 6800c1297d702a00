package online

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/train"
	"streamer/synth"
	"streamer/vector"
)

// clusterLearner observes 600 points of three clusters, every tenth
// labeled by label(i), and solves once.
func clusterLearner(t *testing.T, vote VoteConfig, label func(i, class int) string) (*Learner, SolveReport, []vector.Vector, []int) {
	t.Helper()
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 700, Dim: 6, Clusters: 3, Spread: 0.5, Seed: 9})
	l, err := NewLearner(LearnerConfig{
		Features: 6, Window: anngraph.Config{MaxExamples: 1000, K: 8, Metric: anngraph.Euclidean, Seed: 1},
		Params: train.Params{Algorithm: train.LapSVM, LambdaI: 1}, SolveExamples: 1 << 30, SolveLabels: 1 << 30,
		Vote: vote,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 600 {
		lab := ""
		if i%10 == 0 {
			lab = label(i, cs[i])
		}
		if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), xs[i], lab); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := l.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l, rep, xs, cs
}

func classLabel(_, class int) string { return fmt.Sprint(class) }

// TestVoteBlendsWhereTheGraphFollowsTheLabels: on clusters that the labels
// follow, the solve leaves a vote of weight 0.5, and an example's class is
// the one of largest blended probability, (1-w)·the model's plus w·the
// vote's.
func TestVoteBlendsWhereTheGraphFollowsTheLabels(t *testing.T) {
	l, rep, xs, cs := clusterLearner(t, VoteConfig{}, classLabel)
	s := l.Scoring()
	if rep.VoteWeight != 0.5 || s.Vote == nil || s.VoteWeight != 0.5 {
		t.Fatalf("vote weight %v (scoring %v, vote %v); want 0.5", rep.VoteWeight, s.VoteWeight, s.Vote != nil)
	}
	if rep.LabeledEdges == 0 || rep.AgreeingEdges < rep.LabeledEdges*9/10 {
		t.Fatalf("%d of %d labeled edges agree", rep.AgreeingEdges, rep.LabeledEdges)
	}
	correct := 0
	for i := 600; i < len(xs); i++ {
		p, m, _, ok := l.Predict(xs[i])
		if !ok {
			t.Fatal("no prediction")
		}
		model := m.Predict(xs[i])
		votes, voted := s.Vote.Distribution(xs[i], nil)
		if !voted {
			t.Fatalf("example %d: no vote", i)
		}
		blend := m.Distribution(model.Scores)
		best := 0
		for k := range blend {
			blend[k] = 0.5*blend[k] + 0.5*votes[k]
			if blend[k] > blend[best] {
				best = k
			}
		}
		if p.Class != best || math.Abs(p.Prob-blend[best]) > 1e-12 {
			t.Fatalf("example %d: class %d prob %v, blend gives %d %v", i, p.Class, p.Prob, best, blend[best])
		}
		for k := range model.Scores {
			if p.Scores[k] != model.Scores[k] {
				t.Fatalf("example %d: scores %v, the model's %v", i, p.Scores, model.Scores)
			}
		}
		if m.Classes[p.Class] == fmt.Sprint(cs[i]) {
			correct++
		}
	}
	if correct < 95 {
		t.Fatalf("%d of 100 new examples right", correct)
	}
}

// TestVoteBlendsBeforeLabeledEdgesAgree: with labels too sparse for
// more than a couple of kNN edges to join two of them, nothing shows
// that the graph ignores the labels, and the vote blends.
func TestVoteBlendsBeforeLabeledEdgesAgree(t *testing.T) {
	sparse := func(i, class int) string {
		if i%100 != 0 {
			return ""
		}
		return classLabel(i, class)
	}
	l, rep, _, _ := clusterLearner(t, VoteConfig{}, sparse)
	if rep.LabeledEdges > 2 {
		t.Fatalf("%d labeled edges among 6 labels", rep.LabeledEdges)
	}
	if s := l.Scoring(); rep.VoteWeight != 0.5 || s.Vote == nil {
		t.Fatalf("vote weight %v with %d of %d labeled edges agreeing; want 0.5", rep.VoteWeight, rep.AgreeingEdges, rep.LabeledEdges)
	}
}

// TestNoVote: with the vote off, or labels drawn at random so that the
// graph does not follow them, the model scores alone.
func TestNoVote(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(_, _ int) string { return fmt.Sprint(r.IntN(3)) }
	for name, tc := range map[string]struct {
		vote  VoteConfig
		label func(i, class int) string
	}{
		"off":           {VoteConfig{Off: true}, classLabel},
		"random labels": {VoteConfig{}, random},
	} {
		t.Run(name, func(t *testing.T) {
			l, rep, xs, _ := clusterLearner(t, tc.vote, tc.label)
			if rep.VoteWeight != 0 || l.Scoring().Vote != nil {
				t.Fatalf("vote weight %v; want none", rep.VoteWeight)
			}
			p, m, _, _ := l.Predict(xs[650])
			if want := m.Predict(xs[650]); p.Class != want.Class || p.Prob != want.Prob {
				t.Fatalf("prediction %+v, the model's %+v", p, want)
			}
		})
	}
}

// TestVoteScoresWhileSolving predicts from several goroutines while the
// learner observes and solves (run with -race): scoring reads the vote of
// the model in force, which no solve changes.
func TestVoteScoresWhileSolving(t *testing.T) {
	l, _, xs, cs := clusterLearner(t, VoteConfig{}, classLabel)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				if _, _, _, ok := l.Predict(xs[i%len(xs)]); !ok {
					t.Error("no prediction")
					return
				}
			}
		})
	}
	for i := 600; i < len(xs); i++ {
		if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), xs[i], fmt.Sprint(cs[i])); err != nil {
			t.Fatal(err)
		}
		if i%20 == 0 {
			if _, err := l.Solve(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop()
	wg.Wait()
}
