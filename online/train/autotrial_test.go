package train

import (
	"context"
	"math"
	"slices"
	"testing"

	"streamer/online/model"
	"streamer/synth"
)

// TestTrialRecordCountsDisagreements checks the record: a label both
// candidates got right, or both wrong, leaves it alone; one that only one
// got right counts 1 for it, and weighs the earlier ones down by
// 1 − 1/autoMemory.
func TestTrialRecordCountsDisagreements(t *testing.T) {
	var r trialRecord
	r.add(true, true)
	r.add(false, false)
	if r != (trialRecord{}) {
		t.Fatalf("agreements recorded: %+v", r)
	}
	r.add(true, false)
	r.add(false, true)
	r.add(false, true)
	keep := 1 - 1.0/autoMemory
	want := trialRecord{SR: keep * keep, Rival: keep + 1}
	if math.Abs(r.SR-want.SR) > 1e-15 || math.Abs(r.Rival-want.Rival) > 1e-15 {
		t.Fatalf("record %+v, want %+v", r, want)
	}
}

// TestAutoServesTheCandidateRightMoreOften checks auto's trial on a
// window whose graph follows the labels in part, where chooseAuto picks
// lapsvm and sr is a candidate (where the graph follows them well, it
// picks sr outright): a previous solve whose sr candidate
// classified the labels that arrived since correctly and whose lapsvm did
// not has sr served, the other way round lapsvm; the model not served
// keeps no trial of its own. Then, with no new label, lapsvm stays served
// and sr, not served, is solved at the 1st, 3rd and 7th solve (intervals
// 1, 2, 4), and kept as it was otherwise.
func TestAutoServesTheCandidateRightMoreOften(t *testing.T) {
	const n, c = 600, 5
	good, truth := trialData(t, n, c, 0.2)
	if choice, candidate := chooseAuto(good, Params{}); choice.Algorithm != SR || candidate {
		t.Fatalf("chooseAuto on a graph that follows the labels: %s, sr a candidate: %v; want sr, chosen outright", choice.Algorithm, candidate)
	}
	before := good
	before.Labels = relabel(good.Labels, 0.5, c, 2)
	after := before
	after.Labels = append([]string(nil), before.Labels...)
	for i := 1; i < n; i += 20 { // labels that arrive between the solves
		after.Labels[i] = truth[i]
	}
	for _, data := range []Window{before, after} {
		if choice, candidate := chooseAuto(data, Params{}); choice.Algorithm != LapSVM || !candidate {
			t.Fatalf("chooseAuto: %s, sr a candidate: %v; want lapsvm, and sr a candidate", choice.Algorithm, candidate)
		}
	}
	wrong := good
	wrong.Labels = relabel(good.Labels, 1, c, 5)
	ctx := context.Background()
	train := func(data Window, a Algorithm, prev *model.Model) (*model.Model, Stats) {
		t.Helper()
		m, st, err := Solve(ctx, data, Params{Algorithm: a, LambdaI: autoLambdaI}, prev)
		if err != nil {
			t.Fatal(err)
		}
		return m, st
	}
	trialOf := func(served, other *model.Model) *model.Model {
		m := *served
		m.Warm = &warmState{spectral: warmOf(served).spectral, trial: &autoTrial{other: other, labeled: labeledKeys(before), every: 1}}
		return &m
	}
	var last *model.Model
	for _, tt := range []struct {
		name string
		prev func() *model.Model
		want Algorithm
	}{
		{"sr right", func() *model.Model {
			lapsvm, _ := train(wrong, LapSVM, nil)
			sr, _ := train(good, SR, nil)
			return trialOf(lapsvm, sr)
		}, SR},
		{"lapsvm right", func() *model.Model {
			lapsvm, _ := train(good, LapSVM, nil)
			sr, _ := train(wrong, SR, nil)
			return trialOf(sr, lapsvm)
		}, LapSVM},
	} {
		m, st := train(after, Auto, tt.prev())
		if st.Algorithm != tt.want || (m.Centroids != nil) != (tt.want == SR) {
			t.Errorf("%s: served %s (centroids %v), want %s", tt.name, st.Algorithm, m.Centroids != nil, tt.want)
		}
		if st.Rival != LapSVM || (st.TrialSR > st.TrialRival) != (tt.want == SR) {
			t.Errorf("%s: stats name the rival %q, record sr %v against %v; want lapsvm, and the served one ahead", tt.name, st.Rival, st.TrialSR, st.TrialRival)
		}
		if trialIn(m) == nil || trialIn(trialIn(m).other) != nil {
			t.Fatalf("%s: trial %+v: want one, whose other model has none", tt.name, trialIn(m))
		}
		last = m
	}
	var solved []bool
	for range 8 {
		sr := trialIn(last).other
		m, st := train(after, Auto, last)
		if st.Algorithm != LapSVM {
			t.Fatalf("no new label: served %s, want lapsvm (record %+v)", st.Algorithm, trialIn(m).record)
		}
		solved = append(solved, &trialIn(m).other.Problems[0] != &sr.Problems[0])
		last = m
	}
	if want := []bool{true, false, true, false, false, false, true, false}; !slices.Equal(solved, want) {
		t.Errorf("sr solved at the solves %v, want %v", solved, want)
	}
}

// TestAutoServesSROnATieWhenTheGraphLeansToIt: at the first solve, with
// too few labeled kNN edges for the rule to choose sr, the trial's record
// is tied; auto serves sr when at least autoMinTieEdges of them agree,
// and svm when only two do, unless the last model served sr: a tie does
// not switch sr to svm, nor svm to sr without the edges.
func TestAutoServesSROnATieWhenTheGraphLeansToIt(t *testing.T) {
	data, _ := trialData(t, 600, 5, 0.04)
	two := data
	two.Labels = slices.Clone(data.Labels)
	for _, agreeing := range []bool{false, true} { // unlabel rows until two agreeing edges are left
		for e := range data.Graph.Edges() {
			if _, edges, _ := graphFollows(two); edges <= 2 {
				break
			}
			i, j, _ := data.Graph.Edge(e)
			if two.Labels[i] == "" || two.Labels[j] == "" || (two.Labels[i] == two.Labels[j]) != agreeing {
				continue
			}
			for _, v := range []int{i, j} { // an end whose label takes no more than the edges above two
				label := two.Labels[v]
				two.Labels[v] = ""
				if _, edges, _ := graphFollows(two); edges >= 2 || !agreeing {
					break
				}
				two.Labels[v] = label
			}
		}
	}
	ctx := context.Background()
	last := func(a Algorithm) *model.Model { // a model served by the rule, without a trial
		t.Helper()
		m, _, err := Solve(ctx, two, Params{Algorithm: a}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tt := range []struct {
		name  string
		data  Window
		leans bool
		prev  *model.Model
		want  Algorithm
	}{
		{"edges agree", data, true, nil, SR},
		{"two edges agree", two, false, nil, SVM},
		{"two edges agree, sr served before", two, false, last(SR), SR},
		{"two edges agree, svm served before", two, false, last(SVM), SVM},
	} {
		same, edges, follows := graphFollows(tt.data)
		if !follows || edges >= autoMinEdges || leansSR(tt.data) != tt.leans {
			t.Fatalf("%s: %d of %d labeled edges agree: not the case this test is for", tt.name, same, edges)
		}
		m, st, err := Solve(ctx, tt.data, Params{Algorithm: Auto}, tt.prev)
		if err != nil {
			t.Fatal(err)
		}
		if st.Algorithm != tt.want || st.Rival != SVM || (m.Centroids != nil) != (tt.want == SR) || trialIn(m) == nil {
			t.Errorf("%s (%d edges): served %s against %q (trial %v), want %s against svm", tt.name, edges, st.Algorithm, st.Rival, trialIn(m) != nil, tt.want)
		}
	}
}

// trialData returns srData's window of n rows in 6 dimensions and c
// classes (a fraction frac of the labels, two a class at least) with the
// rows and keys that auto's trial needs, and every row's class.
func trialData(t *testing.T, n, c int, frac float64) (Window, []string) {
	t.Helper()
	data, truth, _ := srData(t, n, 6, c, frac, 4)
	data.Rows, _ = synth.Clusters(synth.ClusterConfig{Points: n, Dim: 6, Clusters: c, Spread: 0.6, Seed: 4})
	data.Keys = make([]uint64, n)
	for i := range data.Keys {
		data.Keys[i] = uint64(i)
	}
	return data, truth
}

// TestAutoTriesSRWhileTooFewEdgesToTell: with too few labeled kNN edges
// for the rule to judge the graph (here none), auto serves svm and solves
// sr beside it; when the labels that arrive find sr's model right where
// svm's was wrong, it serves sr, before the edges are enough for the rule.
func TestAutoTriesSRWhileTooFewEdgesToTell(t *testing.T) {
	const n, c = 600, 5
	before, truth := trialData(t, n, c, 0)
	after := before
	after.Labels = slices.Clone(before.Labels)
	for i := 7; i < n; i += 60 { // ten labels arrive between the solves
		after.Labels[i] = truth[i]
	}
	for _, data := range []Window{before, after} {
		if same, edges, _ := graphFollows(data); edges >= autoMinEdges || leansSR(data) {
			t.Fatalf("%d of %d labeled edges agree: not the case this test is for", same, edges)
		}
	}
	ctx := context.Background()
	first, st, err := Solve(ctx, before, Params{Algorithm: Auto}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Algorithm != SVM || st.Rival != SVM || trialIn(first) == nil || trialIn(first).other.Centroids == nil {
		t.Fatalf("first solve: served %s against %q (trial %v); want svm, with sr solved beside it", st.Algorithm, st.Rival, trialIn(first) != nil)
	}
	wrong := before
	wrong.Labels = relabel(before.Labels, 1, c, 5)
	svm, _, err := Solve(ctx, wrong, Params{Algorithm: SVM}, nil)
	if err != nil {
		t.Fatal(err)
	}
	svm.Warm = &warmState{spectral: warmOf(svm).spectral, trial: &autoTrial{other: trialIn(first).other, labeled: labeledKeys(before), every: 1}}
	second, st, err := Solve(ctx, after, Params{Algorithm: Auto}, svm)
	if err != nil {
		t.Fatal(err)
	}
	if st.Algorithm != SR || st.Rival != SVM || second.Centroids == nil || !(st.TrialSR > st.TrialRival) {
		t.Errorf("second solve: served %s against %q, record sr %v against %v; want sr against svm, ahead", st.Algorithm, st.Rival, st.TrialSR, st.TrialRival)
	}
}

// trialIn returns the trial that training kept in m, nil for none.
func trialIn(m *model.Model) *autoTrial { return warmOf(m).trial }
