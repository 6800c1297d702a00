package online

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"streamer/online/train"
)

// TestForget: a learner told to forget what came before the 200th of 300
// rows solves at once, then holds no label (or, with rows, no row) of the
// first 200, takes no late label for them, and keeps the rest; on a plain
// window and on a kNN graph.
func TestForget(t *testing.T) {
	for _, algo := range []train.Algorithm{train.SVM, train.LapSVM} {
		for _, rows := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s rows %v", algo, rows), func(t *testing.T) {
				l := newTestLearner(t, algo, 1000)
				data := textRows(300, 2)
				observeEveryFifth(l, data, func(r labeledRow) string { return r.class })
				if _, err := l.Solve(context.Background()); err != nil {
					t.Fatal(err)
				}
				pos, ok := l.Admitted(data[200].id)
				if !ok || pos != 200 {
					t.Fatalf("row 200 admitted at %d (%v)", pos, ok)
				}
				if next, ok := l.Admitted("unknown"); ok || next != 300 {
					t.Fatalf("an unknown id: %d, %v; want 300, false", next, ok)
				}
				if l.Due() {
					t.Fatal("due before Forget")
				}
				l.Chosen(data[0].id)
				l.Chosen(data[250].id)
				l.Forget(pos, rows)
				l.Label(data[1].id, data[1].class) // late, and before the change
				if !l.Due() {
					t.Fatal("not due after Forget")
				}
				if _, err := l.Solve(context.Background()); err != nil {
					t.Fatal(err)
				}
				n, labeled := l.WindowSize()
				wantN := 300
				if rows {
					wantN = 100
				}
				if n != wantN || labeled != 20 {
					t.Errorf("window of %d rows, %d labeled; want %d and 20", n, labeled, wantN)
				}
				if l.Contains(data[50].id) == rows || !l.Contains(data[250].id) {
					t.Errorf("rows 50 and 250 in the window: %v, %v", l.Contains(data[50].id), l.Contains(data[250].id))
				}
				if l.Due() {
					t.Error("still due after the solve")
				}
				if l.IsChosen(data[0].id) || !l.IsChosen(data[250].id) || len(l.chosen) != 1 {
					t.Errorf("chosen marks of rows 0 and 250: %v, %v, %d in all; want the forgotten one gone",
						l.IsChosen(data[0].id), l.IsChosen(data[250].id), len(l.chosen))
				}
			})
		}
	}
}

// TestReacted: the model that carried out a forget is known by its
// version once it is solved, not before, and a second forget waits for
// its own solve.
func TestReacted(t *testing.T) {
	l := newTestLearner(t, train.SVM, 1000)
	data := textRows(300, 2)
	observeEveryFifth(l, data, func(r labeledRow) string { return r.class })
	first, err := l.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Reacted(1); ok {
		t.Fatal("reacted before any forget")
	}
	l.Forget(100, false)
	forgets := l.Forgets()
	if v, ok := l.Reacted(forgets); ok {
		t.Fatalf("reacted (version %d) before a solve", v)
	}
	rep, err := l.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := l.Reacted(forgets); !ok || v != rep.Version || v <= first.Version {
		t.Errorf("reacted %d (%v), want the version solved after the forget, %d", v, ok, rep.Version)
	}
	l.ForgetClasses(200, []string{data[0].class})
	if _, ok := l.Reacted(l.Forgets()); ok {
		t.Error("a second forget counted as carried out before its solve")
	}
}

// TestForgetClasses: a learner told to forget one class's labels before
// the 200th of 300 rows solves at once, then holds none of that class's
// labels before it, takes no late one, and keeps every other label, late
// ones of other classes among them.
func TestForgetClasses(t *testing.T) {
	l := newTestLearner(t, train.LapSVM, 1000)
	data := textRows(300, 2)
	classOf := func(i int) string { return []string{"a", "b", "c"}[(i/5)%3] }
	for i, r := range data {
		var y string
		if i%5 == 0 {
			y = classOf(i)
		}
		l.Observe(r.id, time.Time{}, r.v, y)
	}
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.ForgetClasses(200, []string{"a"})
	l.Label(data[1].id, "a") // late, before the change, of the forgotten class
	l.Label(data[2].id, "b") // late, before the change, of another class
	if !l.Due() {
		t.Fatal("not due after ForgetClasses")
	}
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	want := map[string]int{}
	for i := 0; i < 300; i += 5 {
		if c := classOf(i); c != "a" || i >= 200 {
			want[c]++
		}
	}
	want["b"]++
	got := map[string]int{}
	for key, c := range l.labels {
		got[c]++
		if c == "a" && key < 200 {
			t.Errorf("row %d keeps its label a", key)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("labels by class %v, want %v", got, want)
	}
}

// TestUnlabelAfterARestart: the labels a forget took or refused are
// listed by id, and a learner that reads the same rows and labels again,
// as a restore does, holds the same labels once told to unlabel them, and
// takes no later label for them.
func TestUnlabelAfterARestart(t *testing.T) {
	data := textRows(300, 2)
	classOf := func(i int) string { return []string{"a", "b", "c"}[(i/5)%3] }
	observe := func(l *Learner) {
		for i, r := range data {
			var y string
			if i%5 == 0 {
				y = classOf(i)
			}
			l.Observe(r.id, time.Time{}, r.v, y)
		}
	}
	labelsOf := func(l *Learner) map[string]string {
		l.mu.Lock()
		defer l.mu.Unlock()
		out := map[string]string{}
		for key, c := range l.labels {
			out[l.idOf[key]] = c
		}
		return out
	}
	before := newTestLearner(t, train.LapSVM, 1000)
	observe(before)
	before.ForgetClasses(200, []string{"a"})
	before.Label(data[1].id, "a") // refused
	if _, err := before.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	ids := before.Unlabeled()
	if len(ids) != 14+1 || !slices.Contains(ids, data[1].id) || !slices.Contains(ids, data[0].id) {
		t.Fatalf("unlabeled %v; want the 14 labels of a before row 200 and the refused one", ids)
	}

	after := newTestLearner(t, train.LapSVM, 1000)
	observe(after)
	after.Label(data[1].id, "a") // the labels topic read again
	after.Unlabel(ids)
	after.Label(data[0].id, "a")
	if got, want := labelsOf(after), labelsOf(before); !maps.Equal(got, want) {
		t.Errorf("labels after the restart %v, want %v", got, want)
	}
	if got := after.Unlabeled(); !slices.Equal(got, ids) {
		t.Errorf("unlabeled after the restart %v, want %v", got, ids)
	}
}

// TestQuicken: solves come four times sooner for the next 1,000 rows,
// then as before.
func TestQuicken(t *testing.T) {
	l := newTestLearner(t, train.SVM, 5000)
	data := textRows(2000, 3)
	l.Quicken(4, 1000)
	due := func(from int) int {
		for i, r := range data[from:] {
			l.Observe(r.id, time.Time{}, r.v, "")
			if l.Due() {
				l.MarkSolved()
				return i + 1
			}
		}
		return -1
	}
	if n := due(0); n != 25 {
		t.Errorf("quickened: due after %d rows, want 25", n)
	}
	for from := 25; from < 975; from += 25 {
		if n := due(from); n != 25 {
			t.Fatalf("quickened, from row %d: due after %d rows, want 25", from, n)
		}
	}
	for _, r := range data[975:1000] {
		l.Observe(r.id, time.Time{}, r.v, "")
	}
	l.MarkSolved()
	if n := due(1000); n != 100 {
		t.Errorf("after 1000 rows: due after %d rows, want 100", n)
	}
}

// TestScoreNear: with KeepView, scoring searches the nearest rows of the
// window solved on when asked, and only then, where the vote does not;
// the rows are the view's.
func TestScoreNear(t *testing.T) {
	l := newTestLearner(t, train.LapSVM, 1000)
	l.cfg.KeepView, l.cfg.Vote.Off = true, true
	data := textRows(400, 4)
	observeEveryFifth(l, data[:300], func(r labeledRow) string { return r.class })
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := l.Scoring()
	if s.View == nil || s.Vote != nil {
		t.Fatalf("view %v, vote %v; want a view and no vote", s.View != nil, s.Vote != nil)
	}
	x := data[350].v
	if got := s.Score(x, false); got.Near != nil || got.Class != s.Model.Predict(x).Class {
		t.Errorf("not asked: %d rows searched, class %d", len(got.Near), got.Class)
	}
	got := s.Score(x, true)
	if len(got.Near) != nearRows || got.Rows != 300 {
		t.Fatalf("asked: %d rows of %d, want %d of 300", len(got.Near), got.Rows, nearRows)
	}
	for _, nb := range got.Near {
		if nb.Row < 0 || nb.Row >= 300 {
			t.Fatalf("row %d outside the view", nb.Row)
		}
	}
}
