package train

import (
	"context"
	"math"
	"slices"
	"testing"

	"streamer/online/model"
	"streamer/synth"
)

// TestTrialRecordCountsDisagreements checks the record: a label every
// candidate got right, or every one wrong, leaves it alone; one that some
// got right counts 1 for each of them, and weighs the earlier ones down
// by 1 − 1/autoMemory.
func TestTrialRecordCountsDisagreements(t *testing.T) {
	r := trialRecord{SR: 0, LapSVM: 0, SVM: 0}
	r.add(map[Algorithm]bool{SR: true, LapSVM: true, SVM: true})
	r.add(map[Algorithm]bool{SR: false, LapSVM: false, SVM: false})
	if r[SR] != 0 || r[LapSVM] != 0 || r[SVM] != 0 {
		t.Fatalf("agreements recorded: %v", r)
	}
	r.add(map[Algorithm]bool{SR: true, LapSVM: false, SVM: false})
	r.add(map[Algorithm]bool{SR: false, LapSVM: true, SVM: true})
	r.add(map[Algorithm]bool{SR: false, LapSVM: true})
	keep := 1 - 1.0/autoMemory
	want := trialRecord{SR: keep * keep, LapSVM: keep + 1, SVM: keep}
	for a, w := range want {
		if math.Abs(r[a]-w) > 1e-15 {
			t.Fatalf("record %v, want %v", r, want)
		}
	}
}

// TestTrialServesTheRecordsFirst checks the choice among candidates: the
// one with the larger record; on a tie sr where it is preferred, else the
// rule's choice, candidates[0]; svm, the guard, never on a tie.
func TestTrialServesTheRecordsFirst(t *testing.T) {
	for _, tt := range []struct {
		record   trialRecord
		preferSR bool
		want     Algorithm
	}{
		{trialRecord{LapSVM: 1, SR: 2, SVM: 1.5}, false, SR},
		{trialRecord{LapSVM: 1, SR: 0.5, SVM: 1.5}, true, SVM},
		{trialRecord{LapSVM: 1, SR: 1, SVM: 1}, false, LapSVM},
		{trialRecord{LapSVM: 1, SR: 1, SVM: 1}, true, SR},
		{trialRecord{LapSVM: 0.5, SR: 1, SVM: 1}, false, SR},
		{trialRecord{LapSVM: 0.5, SR: 0.2, SVM: 0.5}, true, LapSVM},
	} {
		if got := tt.record.serve([]Algorithm{LapSVM, SR, SVM}, func() bool { return tt.preferSR }); got != tt.want {
			t.Errorf("record %v, sr preferred %v: served %s, want %s", tt.record, tt.preferSR, got, tt.want)
		}
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
	good, before, after, wrong := trialWindows(t)
	if choice, against := chooseAuto(good, Params{}); choice.Algorithm != SR || against != nil {
		t.Fatalf("chooseAuto on a graph that follows the labels: %s against %v; want sr, chosen outright", choice.Algorithm, against)
	}
	for _, data := range []Window{before, after} {
		if choice, against := chooseAuto(data, Params{}); choice.Algorithm != LapSVM || !slices.Equal(against, []Algorithm{SR, SVM}) {
			t.Fatalf("chooseAuto: %s against %v; want lapsvm against sr and svm", choice.Algorithm, against)
		}
	}
	trialOf := func(served *model.Model, a Algorithm, other *model.Model, b Algorithm) *model.Model {
		m := *served
		trial := &autoTrial{served: a, others: map[Algorithm]*model.Model{b: other}, labeled: labeledKeys(before), record: trialRecord{a: 0, b: 0}, every: 1}
		m.Warm = &warmState{spectral: warmOf(served).spectral, trial: trial}
		return &m
	}
	var last *model.Model
	for _, tt := range []struct {
		name string
		prev func() *model.Model
		want Algorithm
	}{
		{"sr right", func() *model.Model {
			lapsvm, _ := solveWith(t, wrong, LapSVM, nil)
			sr, _ := solveWith(t, good, SR, nil)
			return trialOf(lapsvm, LapSVM, sr, SR)
		}, SR},
		{"lapsvm right", func() *model.Model {
			lapsvm, _ := solveWith(t, good, LapSVM, nil)
			sr, _ := solveWith(t, wrong, SR, nil)
			return trialOf(sr, SR, lapsvm, LapSVM)
		}, LapSVM},
	} {
		m, st := solveWith(t, after, Auto, tt.prev())
		if st.Algorithm != tt.want || (m.Centroids != nil) != (tt.want == SR) {
			t.Errorf("%s: served %s (centroids %v), want %s", tt.name, st.Algorithm, m.Centroids != nil, tt.want)
		}
		if len(st.Trial) != 3 || (st.Trial[SR] > st.Trial[LapSVM]) != (tt.want == SR) || st.Trial[SVM] >= st.Trial[tt.want] {
			t.Errorf("%s: stats give the records %v; want lapsvm, sr and svm, the served one ahead", tt.name, st.Trial)
		}
		trial := trialIn(m)
		if trial == nil || len(trial.others) != 2 {
			t.Fatalf("%s: trial %+v: want one, with two models not served", tt.name, trial)
		}
		for a, other := range trial.others {
			if trialIn(other) != nil || (other.Centroids != nil) != (a == SR) {
				t.Errorf("%s: the model kept for %s holds a trial, or is not %s's", tt.name, a, a)
			}
		}
		last = m
	}
	solved := map[Algorithm][]bool{}
	for range 8 {
		others := trialIn(last).others
		m, st := solveWith(t, after, Auto, last)
		if st.Algorithm != LapSVM {
			t.Fatalf("no new label: served %s, want lapsvm (record %+v)", st.Algorithm, trialIn(m).record)
		}
		for _, a := range []Algorithm{SR, SVM} {
			solved[a] = append(solved[a], &trialIn(m).others[a].Problems[0] != &others[a].Problems[0])
		}
		last = m
	}
	want := []bool{true, false, true, false, false, false, true, false}
	for _, a := range []Algorithm{SR, SVM} {
		if !slices.Equal(solved[a], want) {
			t.Errorf("%s solved at the solves %v, want %v", a, solved[a], want)
		}
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
		if st.Algorithm != tt.want || len(st.Trial) != 2 || (m.Centroids != nil) != (tt.want == SR) || trialIn(m) == nil {
			t.Errorf("%s (%d edges): served %s, records %v (trial %v), want %s, with sr and svm tried", tt.name, edges, st.Algorithm, st.Trial, trialIn(m) != nil, tt.want)
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
	if st.Algorithm != SVM || len(st.Trial) != 2 || trialIn(first) == nil || trialIn(first).others[SR].Centroids == nil {
		t.Fatalf("first solve: served %s, records %v (trial %v); want svm, with sr solved beside it", st.Algorithm, st.Trial, trialIn(first) != nil)
	}
	wrong := before
	wrong.Labels = relabel(before.Labels, 1, c, 5)
	svm, _, err := Solve(ctx, wrong, Params{Algorithm: SVM}, nil)
	if err != nil {
		t.Fatal(err)
	}
	trial := &autoTrial{served: SVM, others: trialIn(first).others, labeled: labeledKeys(before), record: trialRecord{SVM: 0, SR: 0}, every: 1}
	svm.Warm = &warmState{spectral: warmOf(svm).spectral, trial: trial}
	second, st, err := Solve(ctx, after, Params{Algorithm: Auto}, svm)
	if err != nil {
		t.Fatal(err)
	}
	if st.Algorithm != SR || second.Centroids == nil || !(st.Trial[SR] > st.Trial[SVM]) {
		t.Errorf("second solve: served %s, records %v; want sr, ahead of svm", st.Algorithm, st.Trial)
	}
}

// trialWindows returns trialData's window of 600 rows and 5 classes, its
// graph following its labels (good); the same with half its labels drawn
// at random, so that auto chooses lapsvm with sr and svm against it
// (before); before with the true labels of every 20th row, which arrive
// between two solves (after); and good with every label drawn at random
// (wrong).
func trialWindows(t *testing.T) (good, before, after, wrong Window) {
	t.Helper()
	const n, c = 600, 5
	good, truth := trialData(t, n, c, 0.2)
	before = good
	before.Labels = relabel(good.Labels, 0.5, c, 2)
	after = before
	after.Labels = slices.Clone(before.Labels)
	for i := 1; i < n; i += 20 {
		after.Labels[i] = truth[i]
	}
	wrong = good
	wrong.Labels = relabel(good.Labels, 1, c, 5)
	return good, before, after, wrong
}

// solveWith solves data with algorithm a (λ_I = autoLambdaI), warm
// started from prev.
func solveWith(t *testing.T, data Window, a Algorithm, prev *model.Model) (*model.Model, Stats) {
	t.Helper()
	m, st, err := Solve(context.Background(), data, Params{Algorithm: a, LambdaI: autoLambdaI}, prev)
	if err != nil {
		t.Fatal(err)
	}
	return m, st
}

// trialIn returns the trial that training kept in m, nil for none.
func trialIn(m *model.Model) *autoTrial { return warmOf(m).trial }

// TestAutoServesSVMWhereTheGraphDoesNotPay checks the supervised svm
// tried beside a choice that uses the graph: where the labels that arrive
// find svm's model right and those of lapsvm and sr wrong, auto serves
// svm, and solves both the others beside it.
func TestAutoServesSVMWhereTheGraphDoesNotPay(t *testing.T) {
	good, before, after, wrong := trialWindows(t)
	lapsvm, _ := solveWith(t, wrong, LapSVM, nil)
	sr, _ := solveWith(t, wrong, SR, nil)
	svm, _ := solveWith(t, good, SVM, nil)
	prev := *lapsvm
	prev.Warm = &warmState{trial: &autoTrial{
		served: LapSVM, others: map[Algorithm]*model.Model{SR: sr, SVM: svm}, labeled: labeledKeys(before),
		record: trialRecord{LapSVM: 0, SR: 0, SVM: 0}, every: 1,
	}}
	m, st := solveWith(t, after, Auto, &prev)
	if st.Algorithm != SVM || m.Centroids != nil || !(st.Trial[SVM] > max(st.Trial[LapSVM], st.Trial[SR])) {
		t.Fatalf("served %s with records %v, want svm ahead", st.Algorithm, st.Trial)
	}
	others := trialIn(m).others
	if len(others) != 2 || &others[LapSVM].Problems[0] == &lapsvm.Problems[0] || &others[SR].Problems[0] == &sr.Problems[0] {
		t.Errorf("models not served %v: want lapsvm and sr, solved afresh at the switch", others)
	}
}

// TestAutoTriesSRAgainstARecordThatDoubtsIt: where the rule would choose
// sr outright (the labeled edges agree), a trial whose record has lapsvm
// clearly ahead of sr goes on, and lapsvm stays served while no label
// says otherwise; a record of no disagreement yet, with sr level, with
// lapsvm ahead by less than two standard deviations, with only the
// supervised svm ahead, or without sr, leaves the rule's choice alone.
func TestAutoTriesSRAgainstARecordThatDoubtsIt(t *testing.T) {
	good, _, _, wrong := trialWindows(t)
	if choice, against := chooseAuto(good, Params{}); choice.Algorithm != SR || against != nil {
		t.Fatalf("chooseAuto: %s against %v; want sr, chosen outright", choice.Algorithm, against)
	}
	lapsvm, _ := solveWith(t, good, LapSVM, nil)
	svm, _ := solveWith(t, good, SVM, nil)
	sr, _ := solveWith(t, wrong, SR, nil)
	trialOf := func(served *model.Model, a Algorithm, record trialRecord) *model.Model {
		m := *served
		trial := &autoTrial{served: a, others: map[Algorithm]*model.Model{SR: sr}, labeled: labeledKeys(good), record: record, every: 1}
		m.Warm = &warmState{trial: trial}
		return &m
	}
	solve := func(prev *model.Model) (*model.Model, Stats) {
		t.Helper()
		m, st, err := Solve(context.Background(), good, Params{Algorithm: Auto}, prev)
		if err != nil {
			t.Fatal(err)
		}
		return m, st
	}
	m, st := solve(trialOf(lapsvm, LapSVM, trialRecord{LapSVM: 7.9, SR: 0.07}))
	for range 2 {
		if st.Algorithm != LapSVM || m.Centroids != nil || trialIn(m) == nil || trialIn(m).others[SR] == nil {
			t.Fatalf("lapsvm ahead: served %s, records %v; want lapsvm, with sr tried beside it", st.Algorithm, st.Trial)
		}
		m, st = solve(m)
	}
	for _, tt := range []struct {
		name string
		prev *model.Model
	}{
		{"no record yet", trialOf(lapsvm, LapSVM, trialRecord{LapSVM: 0, SR: 0})},
		{"sr level", trialOf(lapsvm, LapSVM, trialRecord{LapSVM: 1, SR: 1})},
		{"lapsvm ahead, not clearly", trialOf(lapsvm, LapSVM, trialRecord{LapSVM: 1.64, SR: 1})},
		{"svm ahead", trialOf(svm, SVM, trialRecord{SVM: 5, SR: 0})},
		{"sr not tried", trialOf(lapsvm, LapSVM, trialRecord{LapSVM: 5, SVM: 0})},
	} {
		m, st := solve(tt.prev)
		if st.Algorithm != SR || st.Trial != nil || trialIn(m) != nil {
			t.Errorf("%s: served %s, records %v; want sr, chosen outright", tt.name, st.Algorithm, st.Trial)
		}
	}
}
