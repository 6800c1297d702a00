package active

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// randomPool returns a pool of n rows with random kNN lists of k, a
// share of them labeled among classes, and random distributions.
func randomPool(rng *rand.Rand, n, k, classes int, labeled float64) *Pool {
	p := &Pool{IDs: make([]string, n), Labels: make([]string, n), Neighbours: make([][]int32, n), Probs: make([][]float64, n)}
	for c := range classes {
		p.Classes = append(p.Classes, fmt.Sprint("c", c))
	}
	for i := range n {
		p.IDs[i] = fmt.Sprint("x", i)
		if rng.Float64() < labeled {
			p.Labels[i] = p.Classes[rng.IntN(classes)]
		}
		for range k {
			if j := rng.IntN(n); j != i {
				p.Neighbours[i] = append(p.Neighbours[i], int32(j))
			}
		}
		probs, sum := make([]float64, classes), 0.0
		for c := range probs {
			probs[c] = rng.Float64()
			sum += probs[c]
		}
		for c := range probs {
			probs[c] /= sum
		}
		p.Probs[i] = probs
	}
	return p
}

// bruteHops is the hop distance of every row from the taken ones, capped
// at farHops+1, by relaxing every edge until nothing changes.
func bruteHops(p *Pool, taken []bool) []int {
	adj := p.symmetric()
	h := make([]int, p.Len())
	for i := range h {
		h[i] = farHops + 1
		if taken[i] {
			h[i] = 0
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range adj {
			for _, j := range adj[i] {
				if h[i]+1 < h[j] {
					h[j], changed = h[i]+1, true
				}
			}
		}
	}
	return h
}

func TestRankerHopsAreTheGraphDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		p := randomPool(rng, 5+rng.IntN(60), 1+rng.IntN(4), 3, 0.05)
		taken := make([]bool, p.Len())
		for i, l := range p.Labels {
			taken[i] = l != ""
		}
		r := newRanker(p, append([]bool(nil), taken...))
		for range 3 { // requests taken one by one lower the hops as a fresh search would
			i := rng.IntN(p.Len())
			r.take(i)
			taken[i] = true
		}
		want := bruteHops(p, taken)
		for i := range want {
			if r.hops[i] != want[i] {
				t.Fatalf("trial %d: row %d has %d hops, want %d", trial, i, r.hops[i], want[i])
			}
		}
	}
}

func TestRankerBestIsTheHighestScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 30 {
		p := randomPool(rng, 30+rng.IntN(30), 3, 4, 0.1)
		taken := make([]bool, p.Len())
		for i, l := range p.Labels {
			taken[i] = l != ""
		}
		r := newRanker(p, taken)
		i, rs := r.best()
		if i < 0 || taken[i] {
			t.Fatalf("best row %d is taken or missing", i)
		}
		for j := range taken {
			if r.eligible(j) && r.reason(j).Score > rs.Score {
				t.Fatalf("row %d scores %v above the best %v", j, r.reason(j).Score, rs.Score)
			}
		}
	}
}

func TestReasonPrefersUncertainFarRareRows(t *testing.T) {
	// A path 0-1-2-3-4-5 with row 0 labeled: rows of one distribution
	// score higher the farther they are.
	p := &Pool{IDs: []string{"a", "b", "c", "d", "e", "f"}, Labels: []string{"c0", "", "", "", "", ""},
		Neighbours: [][]int32{{1}, {2}, {3}, {4}, {5}, {4}}, Classes: []string{"c0", "c1"}}
	p.Probs = [][]float64{{0.9, 0.1}, {0.6, 0.4}, {0.6, 0.4}, {0.6, 0.4}, {0.6, 0.4}, {0.6, 0.4}}
	r := newRanker(p, []bool{true, false, false, false, false, false})
	if a, b := r.reason(1).Score, r.reason(3).Score; a >= b {
		t.Errorf("a row next to a label scores %v, one 3 edges away %v", a, b)
	}
	p.Probs[3] = []float64{0.95, 0.05}
	r = newRanker(p, []bool{true, false, false, false, false, false})
	if a, b := r.reason(3).Score, r.reason(2).Score; a >= b*2 {
		t.Errorf("a sure row scores %v against %v for an unsure one at fewer hops", a, b)
	}
	p.Probs[2] = []float64{0.4, 0.6} // class c1 has no label
	if rs := newRanker(p, []bool{true, false, false, false, false, false}).reason(2); !rs.RareClass {
		t.Errorf("a row predicted of a class without labels is not marked rare: %+v", rs)
	}
}

func TestSelectorKeepsItsBudgetAndNeverAsksTwice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s, err := NewSelector(Config{Budget: Budget{Fraction: 0.1}, RandomShare: 0.3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	now := time.Unix(0, 0)
	arrived := 0
	for step := range 40 {
		p := randomPool(rng, 200, 5, 3, 0.02)
		for i := range p.IDs {
			p.IDs[i] = fmt.Sprint("x", step*50+i) // overlapping windows
		}
		s.SetPool(p)
		s.Arrived(50)
		arrived += 50
		now = now.Add(time.Minute)
		labeled := map[string]bool{}
		for i, l := range p.Labels {
			labeled[p.IDs[i]] = l != ""
		}
		if i := rng.IntN(p.Len()); p.Labels[i] == "" { // a label arrives between pools
			s.Labeled(p.IDs[i], "c0", now)
			labeled[p.IDs[i]] = true
		}
		for _, req := range s.Choose(now) {
			if seen[req.ID] {
				t.Fatalf("%s requested twice", req.ID)
			}
			if labeled[req.ID] {
				t.Fatalf("%s requested though labeled", req.ID)
			}
			seen[req.ID] = true
		}
		if sent := len(seen); float64(sent) > 0.1*float64(arrived)+1 {
			t.Fatalf("%d requests for %d examples at 10%%", sent, arrived)
		}
	}
	st := s.Stats()
	if total := st.Sent[StrategyRandom] + st.Sent[StrategyInformative]; total < uint64(0.1*float64(arrived))-2 {
		t.Errorf("%d requests for %d examples at 10%%", total, arrived)
	}
	if st.Sent[StrategyRandom] == 0 {
		t.Errorf("no random request at a share of 0.3: %v", st.Sent)
	}
}

func TestSelectorCountsAnswersAndExpiry(t *testing.T) {
	s, err := NewSelector(Config{Budget: Budget{PerMinute: 2}, Expiry: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{IDs: []string{"a", "b", "c", "d"}, Labels: make([]string, 4), Neighbours: [][]int32{{1}, {2}, {3}, {0}}}
	s.SetPool(p)
	start := time.Unix(100, 0)
	first := s.Choose(start) // a rate asks at once
	if len(first) != 1 || first[0].Reason.Strategy != StrategyCover {
		t.Fatalf("first requests %+v, want one cover request", first)
	}
	more := s.Choose(start.Add(time.Minute)) // two a minute
	if len(more) != 2 {
		t.Fatalf("%d requests after a minute at 2/min", len(more))
	}
	if _, ok, in := s.Labeled(first[0].ID, "x", start.Add(2*time.Minute)); !ok || in {
		t.Errorf("a late answer: answers %v, in time %v", ok, in)
	}
	if _, ok, in := s.Labeled(more[0].ID, "x", start.Add(90*time.Second)); !ok || !in {
		t.Errorf("an answer in time: answers %v, in time %v", ok, in)
	}
	if _, ok, _ := s.Labeled(more[0].ID, "x", start.Add(91*time.Second)); ok {
		t.Error("a second label answered the request again")
	}
	s.Choose(start.Add(10 * time.Minute))
	st := s.Stats()
	if st.Answered[StrategyCover] != 2 || st.InTime[StrategyCover] != 1 || st.Expired[StrategyCover] != 2 {
		t.Errorf("answered %v, in time %v, expired %v; want 2, 1, 2", st.Answered, st.InTime, st.Expired)
	}
}

// TestSelectorRecallCountsOnlyWhatComesAfter: requests recalled after a
// restart are not asked again and count nothing themselves; an answer or
// an expiry after the restart counts once, one before it not again.
func TestSelectorRecallCountsOnlyWhatComesAfter(t *testing.T) {
	s, err := NewSelector(Config{Budget: Budget{PerMinute: 60}, Expiry: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s.SetPool(&Pool{IDs: []string{"open", "lapses", "lapsed", "done", "new"}, Labels: make([]string, 5), Neighbours: [][]int32{{1}, {2}, {3}, {4}, {0}}})
	now := time.Unix(1000, 0)
	recall := func(id string, expires time.Time, answered bool) {
		s.Recall(Request{ID: id, Reason: Reason{Strategy: StrategyInformative}, Expires: expires}, answered, now)
	}
	recall("open", now.Add(time.Hour), false)
	recall("lapses", now.Add(time.Second), false)
	recall("lapsed", now.Add(-time.Second), false)
	recall("done", now.Add(time.Hour), true)
	if _, ok, in := s.Labeled("open", "x", now); !ok || !in {
		t.Errorf("an answer to a recalled request: answers %v, in time %v", ok, in)
	}
	if _, ok, _ := s.Labeled("done", "x", now); ok {
		t.Error("a label answered again a request answered before the restart")
	}
	reqs := s.Choose(now.Add(time.Minute))
	if len(reqs) != 1 || reqs[0].ID != "new" {
		t.Errorf("requests after the restart %+v, want only the example never asked", reqs)
	}
	st := s.Stats()
	if st.Answered[StrategyInformative] != 1 || st.Expired[StrategyInformative] != 1 || st.Sent[StrategyInformative] != 0 {
		t.Errorf("answered %v, expired %v, sent %v; want 1, 1, 0 of the recalled", st.Answered, st.Expired, st.Sent)
	}
}

func TestParseBudget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Budget
		bad  bool
	}{
		{"", Budget{}, false}, {"0", Budget{}, false}, {"5%", Budget{Fraction: 0.05}, false}, {"0.02", Budget{Fraction: 0.02}, false},
		{"30/min", Budget{PerMinute: 30}, false}, {"2/s", Budget{PerMinute: 120}, false}, {"120/h", Budget{PerMinute: 2}, false},
		{"2", Budget{}, true}, {"x/min", Budget{}, true}, {"3/day", Budget{}, true}, {"-1%", Budget{}, true},
	} {
		got, err := ParseBudget(tc.in)
		if (err != nil) != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v, bad %v", tc.in, got, err, tc.want, tc.bad)
		}
		if !tc.bad {
			if back, err := ParseBudget(got.String()); err != nil || back != got {
				t.Errorf("ParseBudget(%q.String() = %q) = %+v, %v", tc.in, got.String(), back, err)
			}
		}
	}
}

func TestUncertaintyPicksTheLeastMarginTimesDensity(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		p := randomPool(rng, 5+rng.IntN(60), 0, 3, 0.1)
		p.Uncertainty, p.Density = true, make([]float64, p.Len())
		for i := range p.IDs {
			p.Density[i] = rng.Float64()
			if rng.IntN(5) == 0 {
				p.Probs[i] = nil // rows without a distribution are no candidates
			}
		}
		taken := make([]bool, p.Len())
		for i, l := range p.Labels {
			taken[i] = l != ""
		}
		r := newRanker(p, taken)
		i, rs := r.best()
		want, wantScore := -1, -1.0
		for j := range p.IDs {
			if taken[j] || p.Probs[j] == nil {
				continue
			}
			best, margin := topTwo(p.Probs[j])
			s := (1 - margin) * p.Density[j]
			if r.perClass[best] <= 2 {
				s *= 2
			}
			if s > wantScore {
				want, wantScore = j, s
			}
		}
		if i != want || (i >= 0 && math.Abs(rs.Score-wantScore) > 1e-12) {
			t.Fatalf("trial %d: best row %d (%v), want %d (%v)", trial, i, rs.Score, want, wantScore)
		}
	}
}

// TestBestLikenedIsTheHighestScore: with a likeness, the best row is the
// one of highest margin × density × (1 − likeness to the nearest taken
// row), as a search over every row finds it, through requests taken one
// by one.
func TestBestLikenedIsTheHighestScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 50 {
		p := randomPool(rng, 5+rng.IntN(60), 0, 3, 0.1)
		n := p.Len()
		like := make([][]float64, n)
		for i := range like {
			like[i] = make([]float64, n)
		}
		for i := range n {
			for j := range i {
				like[i][j] = rng.Float64()
				like[j][i] = like[i][j]
			}
		}
		p.Uncertainty, p.Density = true, make([]float64, n)
		p.Likeness = func(i, j int) float64 { return like[i][j] }
		for i := range p.IDs {
			p.Density[i] = rng.Float64()
		}
		taken := make([]bool, n)
		for i, l := range p.Labels {
			taken[i] = l != ""
		}
		r := newRanker(p, append([]bool(nil), taken...))
		for request := range 3 {
			i, rs := r.best()
			want, wantScore := -1, -1.0
			for j := range n {
				if taken[j] {
					continue
				}
				best, margin := topTwo(p.Probs[j])
				s := (1 - margin) * p.Density[j]
				if r.perClass[best] <= 2 {
					s *= 2
				}
				near := 0.0
				for k := range n {
					if taken[k] {
						near = max(near, like[j][k])
					}
				}
				if s *= 1 - near; s > wantScore {
					want, wantScore = j, s
				}
			}
			if want < 0 {
				break
			}
			if i != want || math.Abs(rs.Score-wantScore) > 1e-12 || rs.Likeness == nil {
				t.Fatalf("trial %d, request %d: best row %d (%+v), want %d (%v)", trial, request, i, rs, want, wantScore)
			}
			r.take(i)
			taken[i] = true
		}
	}
}

// TestLikenessSpreadsRequests: ten alike rows the model is least sure of
// draw every request without a likeness; with one, the second request
// goes to a row unlike the first.
func TestLikenessSpreadsRequests(t *testing.T) {
	const n = 22 // two kinds of ten unlabeled rows, and two labeled rows
	p := &Pool{IDs: make([]string, n), Labels: make([]string, n), Neighbours: make([][]int32, n), Probs: make([][]float64, n),
		Classes: []string{"a", "b"}, Uncertainty: true, Density: make([]float64, n)}
	kind := func(i int) int { return i / 10 }
	for i := range n {
		p.IDs[i], p.Density[i], p.Probs[i] = fmt.Sprint("x", i), 1, []float64{0.55, 0.45}
		if kind(i) == 1 { // the model is surer of the second kind
			p.Probs[i] = []float64{0.7, 0.3}
		}
	}
	p.Labels[20], p.Labels[21] = "a", "b"
	choose := func() []int {
		taken := make([]bool, n)
		taken[20], taken[21] = true, true
		r := newRanker(p, taken)
		var rows []int
		for range 2 {
			i, _ := r.best()
			r.take(i)
			rows = append(rows, i)
		}
		return rows
	}
	if rows := choose(); kind(rows[0]) != 0 || kind(rows[1]) != 0 {
		t.Fatalf("without a likeness the requests are %v, want two of the least sure kind", rows)
	}
	p.Likeness = func(i, j int) float64 {
		if kind(i) == kind(j) {
			return 0.9
		}
		return 0.1
	}
	if rows := choose(); kind(rows[0]) != 0 || kind(rows[1]) != 1 {
		t.Errorf("with a likeness the requests are %v, want one of each kind, the least sure first", rows)
	}
}

func TestSelectorRaiseAccruesFasterForItsExamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s, err := NewSelector(Config{Budget: Budget{Fraction: 0.01}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.SetPool(randomPool(rng, 5000, 5, 3, 0))
	now := time.Unix(0, 0)
	sent := func(arrivals int) int {
		n := 0
		for range arrivals / 100 {
			s.Arrived(100)
			n += len(s.Choose(now))
		}
		return n
	}
	if n := sent(1000); n != 10 {
		t.Fatalf("%d requests for 1,000 examples at 1%%", n)
	}
	s.Raise(4, 1500)
	if n := sent(1000); n != 40 {
		t.Errorf("%d requests for 1,000 examples raised four times, want 40", n)
	}
	if n := sent(1000); n != 20+5 {
		t.Errorf("%d requests for 500 raised and 500 plain examples, want 25", n)
	}
	if n := sent(1000); n != 10 {
		t.Errorf("%d requests for 1,000 examples after the raise, want 10", n)
	}
}
