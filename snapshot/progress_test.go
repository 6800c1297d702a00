package snapshot

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"streamer/online/model"
	"streamer/online/review"
)

// TestProgressRoundTrip keeps the prequential state, the ids of the
// labels drift forgot, the review grades and the drift watch through the
// codec, and
// a snapshot without it (as written before it was kept) decodes with none.
func TestProgressRoundTrip(t *testing.T) {
	s := testSnapshot(2, 50, 1, 7)
	s.Progress = &Progress{
		Solved: true,
		Prequential: Prequential{
			Correct: 9, Total: 11, TruePositives: map[string]int{"spam": 5, "ham": 4},
			FalsePositives: map[string]int{"spam": 2}, FalseNegatives: map[string]int{"ham": 2},
			Recent: [][2]string{{"spam", "spam"}, {"spam", "ham"}}, Unscored: 3,
			Curve: []CurvePoint{{Labels: 10, Examples: 400, Accuracy: 0.8, RecentAccuracy: 0.8}}, Examples: 450,
		},
		Baseline:  &Prequential{Correct: 7, Total: 11},
		Unlabeled: []string{"ex-3", "ex-9"},
		ReviewGrades: NewGrades([]review.Grade{
			{Class: "spam", Prob: 0.75, Correct: true}, {Class: "ham", Prob: 0.5, Correct: false}, {Class: "spam", Prob: 1},
		}),
		Drift: NewDriftWatch(map[string]int64{"labels": 2400, "scores": 900}, map[string]int{"labels": 1, "scores": 2},
			&DriftAlarm{Detector: "labels", Statistic: 7.1, Threshold: 6.9, Examples: 400, ChangeAt: 350,
				EventTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Time: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
				Model: model.Stamp{Epoch: 1, Version: 7}, Reactions: []string{"forget", "solve"}, Classes: []string{"ham", "spam"}}, []DriftLabel{
				{ID: "ex-40", Predicted: "spam", Label: "ham"}, {ID: "ex-41", Predicted: "ham", Label: "ham", Fed: true},
			}),
	}
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Progress, s.Progress) {
		t.Fatalf("progress after a round trip %+v, want %+v", got.Progress, s.Progress)
	}
	var summary strings.Builder
	if err := Summarize(&summary, got); err != nil || !strings.Contains(summary.String(), "2 labels of window rows, forgotten at drift alarms") ||
		!strings.Contains(summary.String(), "3 predictions graded by their labels (1 right)") ||
		!strings.Contains(summary.String(), "2 labels since the labels detector's last alarm (1 given to it, 1 wrong); labels deaf until example 2400; scores deaf until example 900; 3 alarms, the last of labels at example 400, model 1.7") {
		t.Errorf("summary without the forgotten labels, the grades or the drift watch (%v):\n%s", err, summary.String())
	}
	s.Progress = nil
	old, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(old, []byte(`"progress"`)) {
		t.Fatal("a snapshot without progress names it in its header")
	}
	if got, err := Decode(old); err != nil || got.Progress != nil {
		t.Fatalf("snapshot without progress decoded as %+v, %v", got.Progress, err)
	}
}

// TestGradesColumns: grades in columns read back as they were written,
// and a header whose grades do not fit together is refused, naming what.
func TestGradesColumns(t *testing.T) {
	in := []review.Grade{{Class: "b", Prob: 0.25, Correct: true}, {Class: "a", Prob: 0.5}, {Class: "b", Prob: 1, Correct: true}}
	g := NewGrades(in)
	if got := g.Grades(); !reflect.DeepEqual(got, in) {
		t.Fatalf("grades %+v, want %+v", got, in)
	}
	if NewGrades(nil) != nil || (*Grades)(nil).Grades() != nil {
		t.Fatal("no grades are not nil")
	}
	for _, tt := range []struct {
		bad  func(*Grades)
		want string
	}{
		{func(g *Grades) { g.Class[1] = 2 }, "class 2 of grade 1"},
		{func(g *Grades) { g.Class[0] = -1 }, "class -1 of grade 0"},
		{func(g *Grades) { g.Prob = g.Prob[:2] }, "3 classes, 2 probabilities and 3 outcomes"},
		{func(g *Grades) { g.Prob[2] = 1.5 }, "probability 1.5 of grade 2"},
		{func(g *Grades) { g.Correct = "1x1" }, "outcome 'x' of grade 1"},
	} {
		s := testSnapshot(2, 50, 1, 7)
		g := NewGrades(in)
		tt.bad(g)
		s.Progress = &Progress{ReviewGrades: g}
		data, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(data); !errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decode: %v, want ErrNotSnapshot saying %q", err, tt.want)
		}
	}
}

// TestDriftWatchColumns: the drift watch's labels in columns read back as
// they were written, and a header whose columns do not fit together is
// refused, naming what.
func TestDriftWatchColumns(t *testing.T) {
	in := []DriftLabel{{ID: "a", Predicted: "x", Label: "y", Fed: true}, {ID: "b", Predicted: "y", Label: "y"}, {ID: "c", Predicted: "z", Label: "x", Fed: true}}
	w := NewDriftWatch(nil, nil, nil, in)
	if got := w.Labels(); !reflect.DeepEqual(got, in) {
		t.Fatalf("labels %+v, want %+v", got, in)
	}
	if NewDriftWatch(map[string]int64{}, nil, nil, nil) != nil || (*DriftWatch)(nil).Labels() != nil {
		t.Fatal("an empty watch is not nil")
	}
	for _, tt := range []struct {
		bad  func(*DriftWatch)
		want string
	}{
		{func(w *DriftWatch) { w.Predicted[1] = 3 }, "drift label 1 names class 3 of 3"},
		{func(w *DriftWatch) { w.Label[0] = -1 }, "drift label 0 names class -1"},
		{func(w *DriftWatch) { w.IDs = w.IDs[:2] }, "2 ids, 3 predictions, 3 labels and 3 fed"},
		{func(w *DriftWatch) { w.Fed = "1?1" }, "drift fed '?' of label 1"},
		{func(w *DriftWatch) { w.Deaf = map[string]int64{"labels": -5} }, `deaf position -5 of "labels"`},
		{func(w *DriftWatch) { w.Alarms = map[string]int{"scores": -1} }, `alarms -1 of "scores"`},
		{func(w *DriftWatch) { w.Last = &DriftAlarm{Detector: "labels"} }, "a last alarm and counts none"},
	} {
		s := testSnapshot(2, 50, 1, 7)
		w := NewDriftWatch(nil, nil, nil, in)
		tt.bad(w)
		s.Progress = &Progress{Drift: w}
		data, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(data); !errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decode: %v, want ErrNotSnapshot saying %q", err, tt.want)
		}
	}
}
