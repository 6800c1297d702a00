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
	l.addGrade(g)
}

// addGrade puts g in the ring of grades, over the oldest when it is full;
// l.mu is held.
func (l *Learner) addGrade(g review.Grade) {
	if len(l.grades) < l.cfg.Review.Grades {
		l.grades = append(l.grades, g)
		return
	}
	l.grades[l.gradeNext] = g
	l.gradeNext = (l.gradeNext + 1) % len(l.grades)
}

// Grades returns the graded predictions the next solve would choose its
// review thresholds on, oldest first: what a snapshot keeps of them.
func (l *Learner) Grades() []review.Grade {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.orderedGrades()
}

// orderedGrades returns a copy of the ring of grades, oldest first; l.mu
// is held.
func (l *Learner) orderedGrades() []review.Grade {
	out := make([]review.Grade, 0, len(l.grades))
	out = append(out, l.grades[l.gradeNext:]...)
	return append(out, l.grades[:l.gradeNext]...)
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
	since := l.orderedGrades()
	l.grades, l.gradeNext = l.grades[:0], 0
	for _, g := range before {
		if g.Class != "" {
			l.addGrade(g)
		}
	}
	for _, g := range since {
		l.addGrade(g)
	}
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
	l.grades = slices.DeleteFunc(l.orderedGrades(), func(g review.Grade) bool {
		return len(classes) == 0 || slices.Contains(classes, g.Class)
	})
	l.gradeNext = 0
}
