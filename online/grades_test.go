package online

import (
	"fmt"
	"slices"
	"testing"

	"streamer/anngraph"
	"streamer/online/review"
	"streamer/online/train"
)

// gradeLearner returns a learner keeping the last n grades for a target
// precision.
func gradeLearner(t *testing.T, n int) *Learner {
	t.Helper()
	l, err := NewLearner(LearnerConfig{
		Features: 16, Window: anngraph.Config{MaxExamples: 10, K: 2, Seed: 1},
		Params:        train.Params{Algorithm: train.SVM, Lambda: 1e-3},
		Review:        ReviewConfig{TargetPrecision: 0.9, Grades: n},
		SolveExamples: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func grades(from, to int) []review.Grade {
	var out []review.Grade
	for i := from; i < to; i++ {
		out = append(out, review.Grade{Class: fmt.Sprint("c", i), Prob: float64(i) / 100, Correct: i%2 == 0})
	}
	return out
}

// TestGradesResumeBeforeThoseSince: a learner's grades come back oldest
// first, the ring's wrap undone; a restarted learner takes a snapshot's
// grades as older than those it graded since, keeping the newest of both.
func TestGradesResumeBeforeThoseSince(t *testing.T) {
	l := gradeLearner(t, 5)
	for _, g := range grades(0, 8) {
		l.Grade(g)
	}
	if got, want := l.Grades(), grades(3, 8); !slices.Equal(got, want) {
		t.Fatalf("grades %v, want the newest 5 oldest first %v", got, want)
	}

	restarted := gradeLearner(t, 5)
	for _, g := range grades(10, 12) {
		restarted.Grade(g)
	}
	restarted.ResumeGrades(l.Grades())
	if got, want := restarted.Grades(), append(grades(5, 8), grades(10, 12)...); !slices.Equal(got, want) {
		t.Fatalf("after resuming: %v, want %v", got, want)
	}
	restarted.Grade(grades(12, 13)[0])
	if got, want := restarted.Grades(), append(grades(6, 8), grades(10, 13)...); !slices.Equal(got, want) {
		t.Fatalf("after one more: %v, want %v", got, want)
	}

	none := gradeLearner(t, 5)
	none.cfg.Review.TargetPrecision = 0
	none.ResumeGrades(grades(0, 3))
	if got := none.Grades(); len(got) != 0 {
		t.Fatalf("a learner without a target kept %v", got)
	}
}

// TestForgetGrades: the grades of the classes named go, the others stay
// in their order, the ring goes on taking new ones; naming none forgets
// every grade.
func TestForgetGrades(t *testing.T) {
	l := gradeLearner(t, 4)
	in := []review.Grade{{Class: "a", Prob: 0.1}, {Class: "b", Prob: 0.2}, {Class: "a", Prob: 0.3}, {Class: "c", Prob: 0.4}, {Class: "b", Prob: 0.5}}
	for _, g := range in {
		l.Grade(g)
	}
	l.ForgetGrades([]string{"b"})
	if got, want := l.Grades(), []review.Grade{in[2], in[3]}; !slices.Equal(got, want) {
		t.Fatalf("after forgetting b: %v, want %v", got, want)
	}
	for _, g := range in[:3] {
		l.Grade(g)
	}
	if got, want := l.Grades(), []review.Grade{in[3], in[0], in[1], in[2]}; !slices.Equal(got, want) {
		t.Fatalf("after three more: %v, want %v", got, want)
	}
	l.ForgetGrades(nil)
	if got := l.Grades(); len(got) != 0 {
		t.Fatalf("after forgetting every class: %v", got)
	}
}
