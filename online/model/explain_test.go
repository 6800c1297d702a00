package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"streamer/online/internal/onlinetest"
	"streamer/online/kernel"
	"streamer/synth"
	"streamer/vector"
)

// TestAttributionAddsUpToTheScore is the property an explanation rests
// on: for every kind of model (binary, one versus rest, centroids; over
// the features or a kernel map, packed or not) and every class, the bias
// and the terms add up to the class's score, and so do the bias, the top
// k terms and the rest, for every k.
func TestAttributionAddsUpToTheScore(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dense, _ := synth.Clusters(synth.ClusterConfig{Points: 40, Dim: 6, Clusters: 3, Seed: 4})
	sparse, _ := onlinetest.SparseProblem(8, 40, 40, 5, 10)
	for name, rows := range map[string][]vector.Vector{"dense": dense, "sparse": sparse} {
		km, err := kernel.NewMap(rows[:15], 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name       string
			p, classes int
			centroids  bool
		}{{"binary", 1, 2, false}, {"one-vs-rest", 5, 5, false}, {"SR", 6, 7, true}} {
			for _, mapped := range []bool{false, true} {
				for _, packed := range []bool{false, true} {
					dim := 40
					if name == "dense" {
						dim = 6
					}
					if mapped {
						dim = km.Dim()
					}
					m := randomModel(r, tc.p, dim, tc.classes, tc.centroids)
					if mapped {
						m.Map = km
					}
					if packed {
						m.Pack()
					}
					for i, x := range rows[15:25] {
						scores := m.Scores(x, nil)
						for c := range m.Classes {
							a := m.Attribute(x, c)
							if (a.Space == Landmarks) != mapped {
								t.Fatalf("%s %s mapped=%v: space %v", name, tc.name, mapped, a.Space)
							}
							sum := a.Bias
							for _, v := range a.Contribution {
								sum += v
							}
							if !close(sum, scores[c]) || !close(a.Score, scores[c]) {
								t.Fatalf("%s %s mapped=%v packed=%v row %d class %d: bias+terms %v, attribution's score %v, score %v",
									name, tc.name, mapped, packed, i, c, sum, a.Score, scores[c])
							}
							for _, k := range []int{0, 1, 5, len(a.Contribution)} {
								top, rest := a.Top(k)
								sum := a.Bias + rest
								for _, j := range top {
									sum += a.Contribution[j]
								}
								if !close(sum, scores[c]) {
									t.Fatalf("%s %s class %d top %d: %v, score %v", name, tc.name, c, k, sum, scores[c])
								}
								for n := 1; n < len(top); n++ {
									if math.Abs(a.Contribution[top[n]]) > math.Abs(a.Contribution[top[n-1]]) {
										t.Fatalf("top %d not in decreasing size: %v", k, top)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
