package online

import (
	"slices"

	"streamer/online/review"
)

// Grade records a prediction made before its label was known, with
// whether the label agreed: the review thresholds of the next solves are
// chosen on the most recent (ReviewConfig). Without a target precision it
// records nothing.
func (l *Learner) Grade(g review.Grade) {
	if l.cfg.Review.TargetPrecision <= 0 || g.Class == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.grades.Add(g)
}

// Grades returns the graded predictions the next solve would choose its
// review thresholds on, oldest first: what a snapshot keeps of them.
func (l *Learner) Grades() []review.Grade {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.grades.Items()
}

// ResumeGrades puts back the grades of a snapshot (Grades), oldest first,
// as older than those recorded since the process started, so that the
// first solves after a restart choose review thresholds on as many grades
// as before it. Without a target precision it keeps nothing.
func (l *Learner) ResumeGrades(before []review.Grade) {
	if l.cfg.Review.TargetPrecision <= 0 || len(before) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := slices.DeleteFunc(slices.Clone(before), func(g review.Grade) bool { return g.Class == "" })
	l.grades.Reset(append(kept, l.grades.Items()...))
}

// ForgetGrades drops the grades of predictions of the given classes, or
// every grade for none given: a drift alarm found that what those
// classes' labels say changed, so that their grades from before no
// longer tell how often such predictions are right. Until new labels
// grade them again, the next solves review those classes' predictions
// as they would a new class's.
func (l *Learner) ForgetGrades(classes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.grades.Reset(slices.DeleteFunc(l.grades.Items(), func(g review.Grade) bool {
		return len(classes) == 0 || slices.Contains(classes, g.Class)
	}))
}
