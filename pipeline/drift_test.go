package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/online/active"
	"streamer/online/drift"
	"streamer/online/train"
	"streamer/synth"
)

// driftPipeline returns a pipeline of a small window watching for drift
// as d says, its configuration then changed by the options.
func driftPipeline(t *testing.T, d DriftConfig, options ...func(*Config)) *Pipeline {
	t.Helper()
	cfg := Config{
		Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
		Learner: online.LearnerConfig{
			Features:      1 << 14,
			Window:        anngraph.Config{MaxExamples: 400, K: 5},
			Params:        train.Params{Algorithm: train.SVM},
			SolveExamples: 50, SolveLabels: 5,
		},
		Drift: d,
	}
	for _, o := range options {
		o(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// swapStream streams rows examples of two classes, a label for every
// fifth 20 examples later, the two classes' labels swapped from example
// 600 on. It returns the accuracy of the predictions of the 200 examples
// from 700 on.
func swapStream(t *testing.T, p *Pipeline, rows int) float64 {
	t.Helper()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 3, Topics: 2})
	acc, _ := relabeledStream(t, p, gen, rows, map[string]string{"ham": "spam", "spam": "ham"})
	return acc
}

// relabeledStream streams rows examples of gen, a label for every fifth 20
// examples later, the labels of the classes in relabel changed as it says
// from example 600 on. It returns the accuracy of the predictions of the
// examples from 700 to 899, and the examples.
func relabeledStream(t *testing.T, p *Pipeline, gen *synth.TextStream, rows int, relabel map[string]string) (float64, []synth.Document) {
	t.Helper()
	docs := relabeled(gen, rows, relabel)
	return feed(t, p, docs, 0, rows), docs
}

// relabeled returns rows examples of gen, the labels of the classes in
// relabel changed as it says from example 600 on.
func relabeled(gen *synth.TextStream, rows int, relabel map[string]string) []synth.Document {
	docs := make([]synth.Document, rows)
	for i := range docs {
		docs[i] = gen.Next()
		if to, ok := relabel[docs[i].Label]; ok && i >= 600 {
			docs[i].Label = to
		}
	}
	return docs
}

// feed streams the examples docs[from:to] into p, a label for every fifth
// 20 examples later, solving when due. It returns the accuracy of the
// predictions of the examples from 700 to 899 among them.
func feed(t *testing.T, p *Pipeline, docs []synth.Document, from, to int) float64 {
	t.Helper()
	right, scored := 0, 0
	for i := from; i < to; i++ {
		d := docs[i]
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
	return float64(right) / float64(max(1, scored))
}

// TestDriftLabelsAlarmAndForget: labels that turn against the model make
// the labels detector alarm soon after the swap, and, reacting, the
// learner forgets the labels before it and learns the new ones; without
// the reaction the alarm is the same and the model stays wrong longer.
func TestDriftLabelsAlarmAndForget(t *testing.T) {
	t.Parallel()
	detectors := drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}
	var said []Alarm
	react := driftPipeline(t, DriftConfig{Detectors: detectors, Forget: true, OnAlarm: func(a Alarm) { said = append(said, a) }})
	reacted := swapStream(t, react, 900)
	plain := driftPipeline(t, DriftConfig{Detectors: detectors})
	unreacted := swapStream(t, plain, 900)

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

// TestDriftForgetsTheClassesThatChanged: on a stream of four classes
// whose first two swap their labels, the labels detector's alarm names
// the classes of the errors since the change. Where those are the two
// swapped ones, the learner told to forget classes forgets their labels
// from before the change, keeps the others', and is right after the swap
// more often than a learner that forgets every label. Where the errors
// name three of the four classes, it forgets every label. The grades of
// predictions that the review thresholds are chosen on go with the
// labels: grades from before a change of what a class means would keep
// its predictions out of review at the precision of the old meaning.
func TestDriftForgetsTheClassesThatChanged(t *testing.T) {
	t.Parallel()
	detectors := drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}
	// run returns the pipeline, its first alarm, the accuracy after the
	// swap and the classes of the review grades just after the alarm.
	run := func(seed uint64, classes bool) (*Pipeline, Alarm, float64, []string) {
		var p *Pipeline
		var graded []string
		p = driftPipeline(t, DriftConfig{Detectors: detectors, Forget: true, ForgetClasses: classes, OnAlarm: func(Alarm) {
			if graded == nil {
				graded = []string{}
				for _, g := range p.Learner().Grades() {
					if !slices.Contains(graded, g.Class) {
						graded = append(graded, g.Class)
					}
				}
				slices.Sort(graded)
			}
		}}, func(c *Config) { c.Learner.Review.TargetPrecision = 0.9 })
		acc, _ := pairSwapStream(t, p, seed)
		alarms := p.Alarms()
		if len(alarms) == 0 || alarms[0].Detector != drift.Labels {
			t.Fatalf("seed %d: alarms %+v; want one of the labels", seed, alarms)
		}
		return p, alarms[0], acc, graded
	}

	p, first, byClass, graded := run(5, true)
	_, all, byLabels, gradedAll := run(5, false)
	if !slices.Equal(graded, []string{"c", "d"}) || len(gradedAll) != 0 {
		t.Errorf("review grades after the alarm naming %v: of %v forgetting those classes, of %v forgetting every label; want c and d, then none",
			first.Classes, graded, gradedAll)
	}
	if !slices.Equal(first.Classes, []string{"a", "b"}) || !slices.Equal(first.Reactions, []string{"forget_classes", "solve"}) {
		t.Fatalf("first alarm %+v; want classes a and b, forget_classes and solve", first)
	}
	if !slices.Equal(all.Classes, first.Classes) || !slices.Equal(all.Reactions, []string{"forget", "solve"}) {
		t.Errorf("forgetting every label: first alarm %+v", all)
	}
	kept := map[string]int{}
	pool := p.Learner().CoverPool()
	for i, id := range pool.IDs {
		if pos, _ := p.Learner().Admitted(id); pool.Labels[i] != "" && int64(pos) < first.Since {
			kept[pool.Labels[i]]++
		}
	}
	if kept["a"] != 0 || kept["b"] != 0 || kept["c"] == 0 || kept["d"] == 0 {
		t.Errorf("labels kept from before the change, by class: %v; want those of c and d only", kept)
	}
	if byClass < byLabels+0.03 {
		t.Errorf("accuracy after the swap: %.3f forgetting a and b, %.3f forgetting every label; want 3 points ahead", byClass, byLabels)
	} else {
		t.Logf("accuracy after the swap: %.3f forgetting a and b, %.3f forgetting every label", byClass, byLabels)
	}

	_, most, _, gradedMost := run(1, true)
	if len(most.Classes) != 3 || !slices.Equal(most.Reactions, []string{"forget", "solve"}) || len(gradedMost) != 0 {
		t.Errorf("first alarm %+v, review grades of %v after it; want three classes named, every label and every grade forgotten", most, gradedMost)
	}
}

// TestDriftForgottenLabelsStayForgottenAfterARestart: a pipeline restored
// from another's progress, reading the same examples and labels again,
// holds the labels the other holds, not those its drift alarm forgot.
func TestDriftForgottenLabelsStayForgottenAfterARestart(t *testing.T) {
	t.Parallel()
	detectors := drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}
	cfg := DriftConfig{Detectors: detectors, Forget: true, ForgetClasses: true}
	before := driftPipeline(t, cfg)
	_, docs := pairSwapStream(t, before, 5)
	if a := before.Alarms(); len(a) == 0 {
		t.Fatal("no alarm")
	}
	progress := before.Progress()
	if len(progress.Unlabeled) == 0 {
		t.Fatal("no forgotten label in the progress")
	}

	after := driftPipeline(t, cfg)
	for i, d := range docs {
		if err := after.Restore(decoded(t, after, d, false), Source{Topic: "examples", Offset: int64(i)}); err != nil {
			t.Fatal(err)
		}
		if i >= 20 && i%5 == 0 {
			late := docs[i-20]
			after.RestoreLabel(ingest.Label{ID: late.ID, Label: late.Label}, Source{Topic: "labels", Offset: int64(i)})
		}
	}
	after.Resume(progress, false)
	if got, want := windowLabels(after), windowLabels(before); !maps.Equal(got, want) {
		t.Errorf("after the restart %d labels, before it %d; want the same", len(got), len(want))
	}
}

// TestDriftAlarmPositionsContinueAfterARestart: an alarm after a restart
// is placed in the stream counted from its start, as the prequential
// curve is, not from the restart.
func TestDriftAlarmPositionsContinueAfterARestart(t *testing.T) {
	t.Parallel()
	detectors := drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}
	cfg := DriftConfig{Detectors: detectors, Forget: true, ForgetClasses: true}
	before := driftPipeline(t, cfg)
	pairSwapStream(t, before, 5)
	progress := before.Progress()
	// The same stream again is not the one the watch was watching, and
	// 900 examples on the labels detector is still deaf after its alarm:
	// the watch starts afresh here.
	progress.Drift = nil
	after := driftPipeline(t, cfg)
	after.Resume(progress, false)
	pairSwapStream(t, after, 5)
	first, again := before.Alarms(), after.Alarms()
	if len(first) == 0 || len(again) == 0 {
		t.Fatalf("alarms %v before the restart, %v after it", first, again)
	}
	if want := first[0].Examples + int64(progress.SSL.Examples); again[0].Examples != want {
		t.Errorf("the same alarm after 900 examples more at example %d, want %d", again[0].Examples, want)
	}
}

// TestDriftWatchContinuesAcrossARestart: a label swap that begins before
// a restart alarms after it when it would have without the restart: the
// labels detector takes up the labels it was shown since its last alarm,
// by their examples in the window rebuilt, and the reaction forgets the
// labels from before the change. Started afresh, the detector first
// takes a reference of the labels since the restart, the swap's errors
// among them, and finds the swap late or never.
func TestDriftWatchContinuesAcrossARestart(t *testing.T) {
	t.Parallel()
	detectors := drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}
	cfg := DriftConfig{Detectors: detectors, Forget: true}
	docs := relabeled(synth.NewTextStream(synth.TextStreamConfig{Seed: 3, Topics: 2}), 900, map[string]string{"ham": "spam", "spam": "ham"})
	// The restart comes after the first swapped label (that of example
	// 600 comes with example 620) and before the alarm; what a snapshot
	// there holds is taken from the run that goes on without it.
	const restart = 625
	whole := driftPipeline(t, cfg)
	feed(t, whole, docs, 0, restart)
	progress, inForce := whole.Progress(), whole.Learner().InForce()
	wholeAccuracy := feed(t, whole, docs, restart, len(docs))
	alarms := whole.Alarms()
	if len(alarms) == 0 || alarms[0].Examples < restart {
		t.Fatalf("without a restart, alarms %+v; want one after example %d", alarms, restart)
	}
	if kept := whole.Progress().Drift; kept == nil || kept.Deaf[drift.Labels] != alarms[0].Examples+2000 || kept.Last == nil || kept.Last.Examples != alarms[0].Examples {
		t.Errorf("the progress keeps the watch %+v; want the labels detector deaf until 2,000 examples after its alarm, and the alarm", kept)
	}
	later := driftPipeline(t, cfg)
	later.Resume(whole.Progress(), false)
	if st := later.DriftStatus(); st.Alarms != len(alarms) || st.Last == nil || st.Last.Examples != alarms[0].Examples || !slices.Equal(st.Last.Classes, alarms[0].Classes) {
		t.Errorf("restarted after the alarm: %d alarms, the last %+v; want %d, the last %+v", st.Alarms, st.Last, len(alarms), alarms[len(alarms)-1])
	}
	if progress.Drift == nil || len(progress.Drift.IDs) == 0 {
		t.Fatalf("the progress keeps no drift watch: %+v", progress.Drift)
	}
	restarted := func(pr Progress) (*Pipeline, float64) {
		p := driftPipeline(t, cfg)
		p.SetModel(inForce)
		for i, d := range docs[:restart] {
			if err := p.Restore(decoded(t, p, d, false), Source{Topic: "examples", Offset: int64(i)}); err != nil {
				t.Fatal(err)
			}
			if i >= 20 && i%5 == 0 {
				late := docs[i-20]
				p.RestoreLabel(ingest.Label{ID: late.ID, Label: late.Label}, Source{Topic: "labels", Offset: int64(i)})
			}
		}
		p.Resume(pr, false)
		return p, feed(t, p, docs, restart, len(docs))
	}
	after, afterAccuracy := restarted(progress)
	afresh := progress
	afresh.Drift = nil
	fresh, freshAccuracy := restarted(afresh)

	first := func(p *Pipeline) int64 {
		if a := p.Alarms(); len(a) > 0 {
			return a[0].Examples
		}
		return -1
	}
	if got := first(after); got < alarms[0].Examples-10 || got > alarms[0].Examples+10 {
		t.Errorf("after the restart, the first alarm at example %d (-1: none); want %d ± 10, as without it", got, alarms[0].Examples)
	}
	if afterAccuracy < wholeAccuracy-0.05 {
		t.Errorf("accuracy after the swap %.3f across the restart, %.3f without it", afterAccuracy, wholeAccuracy)
	}
	if f := first(fresh); f >= 0 && f <= alarms[0].Examples+50 {
		t.Errorf("started afresh, the detector alarmed at example %d; the test wants a restart it misses", f)
	}
	t.Logf("first alarm at example %d without a restart, %d across it, %d started afresh (-1: none); accuracy after the swap %.3f, %.3f, %.3f",
		alarms[0].Examples, first(after), first(fresh), wholeAccuracy, afterAccuracy, freshAccuracy)
}

// windowLabels returns the labels of p's window by id.
func windowLabels(p *Pipeline) map[string]string {
	pool := p.Learner().CoverPool()
	out := map[string]string{}
	for i, id := range pool.IDs {
		if pool.Labels[i] != "" {
			out[id] = pool.Labels[i]
		}
	}
	return out
}

// pairSwapStream streams 900 examples of four classes a to d, a label
// for every fifth 20 examples later, the labels of a and b swapped from
// example 600 on. It returns the accuracy of the predictions of the
// examples from 700 on, and the examples.
func pairSwapStream(t *testing.T, p *Pipeline, seed uint64) (float64, []synth.Document) {
	t.Helper()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: seed, Topics: 2, Classes: []string{"a", "b", "c", "d"}})
	return relabeledStream(t, p, gen, 900, map[string]string{"a": "b", "b": "a"})
}

// TestDriftAlarmWithoutLabelsAsks: an alarm of a detector without labels
// quickens solves and raises the budget of label requests for the
// examples after it; a pipeline told not to ask keeps its budget.
func TestDriftAlarmWithoutLabelsAsks(t *testing.T) {
	t.Parallel()
	requested := func(ask bool) (int, []string) {
		p, err := New(Config{
			Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
			Learner: online.LearnerConfig{
				Features: 1 << 14, Window: anngraph.Config{MaxExamples: 2000, K: 5},
				Params: train.Params{Algorithm: train.SVM}, SolveExamples: 1 << 20,
			},
			Requests: active.Config{Budget: active.Budget{Fraction: 0.01}, Seed: 1},
			Drift:    DriftConfig{Quicken: true, Ask: ask, AskFactor: 3, AskExamples: 1000},
		})
		if err != nil {
			t.Fatal(err)
		}
		gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 4, Topics: 3})
		n := 0
		for i := range 1500 {
			if i == 500 {
				p.react([]drift.Alarm{{Detector: drift.Neighbours, At: 500}})
			}
			if _, err := p.Example(decoded(t, p, gen.Next(), false), Source{Topic: "examples", Offset: int64(i)}); err != nil {
				t.Fatal(err)
			}
			if i%50 == 49 {
				n += len(p.Requests(time.Unix(int64(i), 0)))
			}
		}
		return n, p.Alarms()[0].Reactions
	}
	asked, reactions := requested(true)
	if asked != 5+30 || !slices.Equal(reactions, []string{"quicken", "ask"}) {
		t.Errorf("asking: %d requests for 1,500 examples at 1%%, the last 1,000 raised three times (want 35); reactions %v", asked, reactions)
	}
	plain, reactions := requested(false)
	if plain != 15 || !slices.Equal(reactions, []string{"quicken"}) {
		t.Errorf("not asking: %d requests for 1,500 examples at 1%% (want 15); reactions %v", plain, reactions)
	}
}

// TestDriftOff: a pipeline whose watch is off says nothing.
func TestDriftOff(t *testing.T) {
	p := driftPipeline(t, DriftConfig{Off: true})
	swapStream(t, p, 800)
	if a := p.Alarms(); len(a) != 0 {
		t.Errorf("alarms %+v", a)
	}
	if st := p.DriftStatus(); len(st.Detectors) != 0 || st.Alarms != 0 {
		t.Errorf("status %+v", st)
	}
}

// driftRun streams d through a pipeline of a learner as the service's
// defaults make it, revealing each label
// with probability rate 100 examples late; it returns the alarms and the
// accuracy at arrival of the after examples from d.Change on.
func driftRun(t *testing.T, d synth.Drift, rate float64, cfg DriftConfig, after int) ([]Alarm, float64) {
	t.Helper()
	p, err := New(Config{
		Learner: online.LearnerConfig{
			Features:      len(d.Rows[0].Values),
			Window:        anngraph.Config{MaxExamples: 20000, K: 10},
			Params:        train.Params{Algorithm: train.Auto, Lambda: 1e-3, LambdaU: 0.1},
			SolveExamples: 250, SolveLabels: 10,
		},
		Drift: cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const delay = 100
	right := 0
	for i, x := range d.Rows {
		id := strconv.Itoa(i)
		pred, err := p.Example(ingest.Example{ID: id, Vector: x}, Source{Topic: "examples", Offset: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if i >= d.Change && i < d.Change+after && pred.Label != nil && *pred.Label == d.Labels[i] {
			right++
		}
		if j := i - delay; j >= 0 && r.Float64() < rate {
			p.Label(ingest.Label{ID: strconv.Itoa(j), Label: d.Labels[j]}, Source{Topic: "labels", Offset: int64(i)})
		}
		if p.Due() {
			if _, err := p.Solve(context.Background()); err != nil && !IsSkip(err) {
				t.Fatal(err)
			}
		}
	}
	return p.Alarms(), float64(right) / float64(after)
}

// TestDriftStreams runs streams with a known change through the
// pipeline: each change is found soon after it began, by the detector
// that can see it, and a stream without a change raises no alarm.
func TestDriftStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 24,000 examples through the learner")
	}
	for _, tc := range []struct {
		kind     synth.DriftKind
		change   float64
		rate     float64
		detector string
		within   int
	}{
		{synth.DriftSwap, 0.5, 0.02, drift.Labels, 2000},
		{synth.DriftNewClass, 0.5, 0.02, "", 1500},
		{synth.DriftSwap, 0.999, 0.02, "none", 0},
	} {
		d, err := synth.DriftStream(synth.DriftConfig{Kind: tc.kind, Rows: 8000, Change: tc.change, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		alarms, acc := driftRun(t, d, tc.rate, DriftConfig{}, 1000)
		var at []string
		found := false
		for _, a := range alarms {
			at = append(at, fmt.Sprintf("%s@%d", a.Detector, a.Examples))
			if a.Examples > int64(d.Change) && a.Examples <= int64(d.Change+tc.within) && (tc.detector == "" || a.Detector == tc.detector) {
				found = true
			}
		}
		t.Logf("%s, change at %d: alarms %v, accuracy over the 1000 examples after it %.3f", tc.kind, d.Change, at, acc)
		if tc.detector == "none" {
			if len(alarms) > 0 {
				t.Errorf("%s without a change: alarms %v", tc.kind, at)
			}
			continue
		}
		if !found {
			t.Errorf("%s: no alarm within %d examples of the change at %d: %v", tc.kind, tc.within, d.Change, at)
		}
	}
}

// TestErrorClassesAreThoseOfTheErrorsSinceAPosition: the classes named
// are the labels and predictions of the wrong outcomes at or after the
// position, among the newest keptGraded; right outcomes name none.
func TestErrorClassesAreThoseOfTheErrorsSinceAPosition(t *testing.T) {
	w, err := newWatch(DriftConfig{})
	if err != nil {
		t.Fatal(err)
	}
	w.outcome("x0", "x", "y", 0, 0, 0, false) // pushed out of the ring below
	for i := range keptGraded {
		class, label := "a", "a"
		switch i {
		case 10:
			class, label = "b", "c" // before the position asked for
		case 600:
			class, label = "d", "e"
		case 1000:
			class, label = "e", "f"
		}
		w.outcome(strconv.Itoa(i), class, label, uint64(1+i), int64(i), 0, false)
	}
	if got := w.errorClasses(500); !slices.Equal(got, []string{"d", "e", "f"}) {
		t.Errorf("classes since 500: %v, want d, e, f", got)
	}
	if got := w.errorClasses(0); !slices.Equal(got, []string{"b", "c", "d", "e", "f"}) {
		t.Errorf("classes since 0: %v, want b to f (x and y pushed out)", got)
	}
}

// TestScoresDetectorStartsAgainForAnotherAlgorithm: predictions that turn
// less sure make the scores detector alarm while one algorithm's models
// make them, and not when the less sure ones come from a model another
// algorithm solved (auto's trial switching from svm to lapsvm), whose
// probabilities spread differently.
func TestScoresDetectorStartsAgainForAnotherAlgorithm(t *testing.T) {
	for _, tt := range []struct {
		after train.Algorithm
		alarm bool
	}{
		{train.SVM, true},
		{train.LapSVM, false},
	} {
		w, err := newWatch(DriftConfig{})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		var alarms []drift.Alarm
		for i := range 4000 {
			kind, prob := modelKind{classes: 3, algorithm: train.SVM}, 0.9+0.05*r.Float64()
			if i >= 2000 {
				kind, prob = modelKind{classes: 3, algorithm: tt.after}, 0.5+0.05*r.Float64()
			}
			s := online.Scored{}
			s.Prob = prob
			alarms = append(alarms, w.arrival(s, kind, true, 1, time.Unix(int64(i), 0), int64(i))...)
		}
		if (len(alarms) > 0) != tt.alarm {
			t.Errorf("svm, then %s: alarms %v, want an alarm: %v", tt.after, alarms, tt.alarm)
		}
	}
}

// TestDriftWatchProgress: the watch keeps for a snapshot the labels shown
// to its labels detector since its last alarm, marking those that came
// while it was deaf, the positions it is deaf until and its alarms, which
// a watch that resumes them counts; no labels when the labels detector
// does not run.
func TestDriftWatchProgress(t *testing.T) {
	w, err := newWatch(DriftConfig{Detectors: drift.Config{Spacing: 100, Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}})
	if err != nil {
		t.Fatal(err)
	}
	now := int64(0)
	show := func(n int, wrong bool) (alarmed int64) {
		alarmed = -1
		for range n {
			now++
			label := "a"
			if wrong {
				label = "b"
			}
			if len(w.outcome(strconv.FormatInt(now, 10), "a", label, uint64(now), now, 0, false)) > 0 && alarmed < 0 {
				alarmed = now
			}
		}
		return alarmed
	}
	show(40, false)
	at := show(30, true)
	if at < 0 {
		t.Fatal("no alarm")
	}
	show(5, false) // while deaf
	kept := w.progress(now)
	since := int(now - at)
	if kept == nil || len(kept.IDs) != since || strings.Contains(kept.Fed, "1") || kept.Deaf[drift.Labels] != at+100 {
		t.Fatalf("%d labels after the alarm at %d: %+v; want as many, none fed, deaf until %d", since, at, kept, at+100)
	}
	if kept.Alarms[drift.Labels] != 1 {
		t.Fatalf("alarms kept %v; want one of labels", kept.Alarms)
	}
	resumed, err := newWatch(DriftConfig{Detectors: drift.Config{Spacing: 100, Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}})
	if err != nil {
		t.Fatal(err)
	}
	resumed.resume(kept, make([]uint64, len(kept.IDs)))
	if resumed.total != 1 || resumed.monitor.Status()[0].Alarms != 1 || resumed.monitor.Listens(drift.Labels, at+99) {
		t.Errorf("resumed: %d alarms, status %+v; want one, and deaf until %d", resumed.total, resumed.monitor.Status()[0], at+100)
	}
	show(200, false)
	kept = w.progress(now)
	if len(kept.IDs) != since+200 || !strings.HasPrefix(kept.Fed, strings.Repeat("0", since)) || strings.Count(kept.Fed, "1") == 0 || len(kept.Deaf) != 0 {
		t.Fatalf("past the spacing: %d labels, fed %q, deaf %v", len(kept.IDs), kept.Fed, kept.Deaf)
	}

	off, err := newWatch(DriftConfig{Detectors: drift.Config{Off: map[string]bool{drift.Labels: true}}})
	if err != nil {
		t.Fatal(err)
	}
	off.outcome("x", "a", "b", 1, 1, 0, false)
	if kept := off.progress(1); kept != nil {
		t.Errorf("with the labels detector off the watch keeps %+v", kept)
	}
}

// TestDriftJudgesTheModelThatForgot: after an alarm that made the learner
// forget, the labels detector judges the predictions of the models solved
// since, not those of the model that was in force, however long the solve
// takes. Here a false alarm on a stationary stream of six classes forgets
// every label, and no solve comes for 250 examples (a solve slowed by
// load). Judging the old model's predictions meanwhile, the detector took
// them for its reference, the weaker model solved on the few labels since
// for a change, and alarmed again, forgetting those labels too. The
// scores detector starts again when that model first scores, not only at
// the alarm.
func TestDriftJudgesTheModelThatForgot(t *testing.T) {
	t.Parallel()
	const rows, alarmAt, solvesFrom = 2000, 1000, 1250
	run := func(wait bool) ([]Alarm, float64) {
		detectors := drift.Config{Spacing: 50, Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}
		p := driftPipeline(t, DriftConfig{Detectors: detectors, Forget: true}, func(c *Config) {
			c.Learner.Window.MaxExamples, c.Learner.SolveExamples, c.Learner.SolveLabels = 1500, 100, 20
		})
		gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 5, Classes: []string{"a", "b", "c", "d", "e", "f"}})
		docs := make([]synth.Document, rows)
		for i := range docs {
			docs[i] = gen.Next()
		}
		right := 0
		for i, d := range docs {
			pred, err := p.Example(decoded(t, p, d, false), Source{Topic: "examples", Offset: int64(i)})
			if err != nil {
				t.Fatal(err)
			}
			if i >= solvesFrom && pred.Label != nil && *pred.Label == d.Label {
				right++
			}
			if i >= 20 && i%5 == 0 {
				late := docs[i-20]
				p.Label(ingest.Label{ID: late.ID, Label: late.Label}, Source{Topic: "labels", Offset: int64(i)})
			}
			if i == alarmAt {
				since, _ := p.learner.Admitted(docs[i-30].ID)
				p.mu.Lock()
				now := p.position()
				p.watch.monitor.Restart(drift.Labels, now) // as the detector's own alarm does
				p.mu.Unlock()
				p.react([]drift.Alarm{{Detector: drift.Labels, At: now, Since: int64(since)}})
				if !wait {
					p.watch.awaited.Store(0) // judge every prediction, as before
				}
			}
			if p.Due() && (i < alarmAt || i >= solvesFrom) {
				if _, err := p.Solve(context.Background()); err != nil && !IsSkip(err) {
					t.Fatal(err)
				}
			}
		}
		if deaf := p.watch.monitor.Deaf()[drift.Scores]; wait && (p.watch.rescore.Load() || deaf < solvesFrom+50) {
			t.Errorf("the scores detector deaf until %d, still to start again %v; want it started again when the model solved at %d scored", deaf, p.watch.rescore.Load(), solvesFrom)
		}
		return p.Alarms()[1:], float64(right) / float64(rows-solvesFrom)
	}
	waited, waitedAcc := run(true)
	judgedOld, judgedOldAcc := run(false)
	t.Logf("after the false alarm: %d alarms and accuracy %.3f judging the models solved since; %d and %.3f judging the old one meanwhile", len(waited), waitedAcc, len(judgedOld), judgedOldAcc)
	if len(waited) > 0 {
		t.Errorf("judging the models solved since, alarms %+v", waited)
	}
}

// TestDriftAlarmAtTheLearnersSwitch: a rise of the errors that began where
// the learner's models changed algorithm is the learner's doing: the alarm
// names the switch and the learner forgets nothing. A rise that began
// before the switch (a change of the stream, which the learner's trial
// then answered by switching) is reacted to as ever.
func TestDriftAlarmAtTheLearnersSwitch(t *testing.T) {
	tests := []struct {
		name     string
		switchAt int // the first outcome predicted by the other algorithm
		forgets  bool
	}{
		{"the rise begins at the switch", 100, false},
		{"the rise begins before the switch", 130, true},
		{"no switch", 1000, true},
	}
	for _, tt := range tests {
		p := driftPipeline(t, DriftConfig{Detectors: drift.Config{Off: map[string]bool{drift.Neighbours: true, drift.Scores: true}}, Forget: true})
		gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 1})
		for i := range 50 { // a model in force, as at any alarm of the labels
			if _, err := p.Example(decoded(t, p, gen.Next(), true), Source{Topic: "examples", Offset: int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.Solve(context.Background()); err != nil {
			t.Fatal(err)
		}
		w := p.watch
		r := rand.New(rand.NewPCG(7, 7))
		for i := range 160 {
			version, algorithm := uint64(1), train.LapSVM
			if i >= tt.switchAt {
				version, algorithm = 2, train.SR
			}
			w.arrival(online.Scored{}, modelKind{classes: 3, algorithm: algorithm}, true, version, time.Unix(int64(i), 0), int64(i))
			wrong := r.Float64() < 0.1 || i >= 100 && r.Float64() < 0.6 // the rise from outcome 100 on
			label := "a"
			if wrong {
				label = "b"
			}
			w.outcome(strconv.Itoa(i), "a", label, uint64(i), int64(i), version, false)
		}
		p.react([]drift.Alarm{{Detector: drift.Labels, At: 160, Since: 100}})
		a := p.Alarms()[0]
		switched := a.SwitchedTo != ""
		if switched == tt.forgets || p.learner.Forgets() > 0 != tt.forgets {
			t.Errorf("%s: switched %q to %q, reactions %v, forgets %d; want forgetting %v", tt.name, a.SwitchedFrom, a.SwitchedTo, a.Reactions, p.learner.Forgets(), tt.forgets)
		}
		if switched && (a.SwitchedFrom != train.LapSVM || a.SwitchedTo != train.SR || len(a.Reactions) != 0) {
			t.Errorf("%s: alarm %+v, want a switch from lapsvm to sr and no reaction", tt.name, a)
		}
	}
}
