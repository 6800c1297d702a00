package snapshot

import (
	"encoding/json"
	"fmt"
	"math"

	"streamer/online/review"
)

// Thresholds are review thresholds, one per class. A class whose
// predictions all go to review has +Inf (review.ReviewAll), written as
// null: JSON has no infinity.
type Thresholds []float64

// MarshalJSON writes +Inf as null.
func (t Thresholds) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(t))
	for c := range t {
		if !math.IsInf(t[c], 1) {
			out[c] = &t[c]
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads null as +Inf.
func (t *Thresholds) UnmarshalJSON(data []byte) error {
	var in []*float64
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*t = nil
	if in == nil {
		return nil
	}
	*t = make(Thresholds, len(in))
	for c, v := range in {
		(*t)[c] = math.Inf(1)
		if v != nil {
			(*t)[c] = *v
		}
	}
	return nil
}

// checkReview verifies that the review thresholds fit the classes, lie in
// [0, 1] (or are +Inf) and come with the target precision they were
// chosen for.
func (h *header) checkReview() error {
	t, target := h.ReviewThresholds, h.ReviewTargetPrecision
	switch {
	case t == nil && target == 0:
		return nil
	case len(t) != len(h.Classes):
		return fmt.Errorf("%w: review_thresholds holds %d thresholds for %d classes", ErrNotSnapshot, len(t), len(h.Classes))
	case !(target > 0 && target < 1):
		return fmt.Errorf("%w: review_target_precision %v must be in (0, 1) beside review_thresholds", ErrNotSnapshot, target)
	}
	for c, v := range t {
		if !(v >= 0 && v <= 1) && !math.IsInf(v, 1) {
			return fmt.Errorf("%w: review_thresholds[%d] is %v, want a value in [0, 1] or null", ErrNotSnapshot, c, v)
		}
	}
	return nil
}

// Grades are the graded predictions the learner chooses review
// thresholds on (review.Grade), oldest first, in columns: prediction i
// was of class Classes[Class[i]] with probability Prob[i], and its label
// agreed when Correct[i] is '1' ('0' else).
type Grades struct {
	Classes []string  `json:"classes"`
	Class   []int     `json:"class"`
	Prob    []float32 `json:"prob"`
	Correct string    `json:"correct"`
}

// NewGrades returns gs in columns; nil for none.
func NewGrades(gs []review.Grade) *Grades {
	if len(gs) == 0 {
		return nil
	}
	var classes dictionary
	out := &Grades{Class: make([]int, len(gs)), Prob: make([]float32, len(gs))}
	for i, g := range gs {
		out.Class[i], out.Prob[i] = classes.of(g.Class), float32(g.Prob)
	}
	out.Classes, out.Correct = classes.names, flags(len(gs), func(i int) bool { return gs[i].Correct })
	return out
}

// Grades returns the grades, oldest first.
func (g *Grades) Grades() []review.Grade {
	if g == nil {
		return nil
	}
	out := make([]review.Grade, len(g.Class))
	for i, c := range g.Class {
		out[i] = review.Grade{Class: g.Classes[c], Prob: float64(g.Prob[i]), Correct: g.Correct[i] == '1'}
	}
	return out
}

// check verifies that the columns have one length, every class index
// names a class, every probability lies in [0, 1] and every Correct is
// '0' or '1'.
func (g *Grades) check() error {
	if g == nil {
		return nil
	}
	if len(g.Prob) != len(g.Class) || len(g.Correct) != len(g.Class) {
		return fmt.Errorf("%w: review_grades has %d classes, %d probabilities and %d outcomes", ErrNotSnapshot, len(g.Class), len(g.Prob), len(g.Correct))
	}
	for i, c := range g.Class {
		switch {
		case c < 0 || c >= len(g.Classes):
			return fmt.Errorf("%w: review_grades class %d of grade %d is not one of its %d classes", ErrNotSnapshot, c, i, len(g.Classes))
		case !(g.Prob[i] >= 0 && g.Prob[i] <= 1):
			return fmt.Errorf("%w: review_grades probability %v of grade %d is not in [0, 1]", ErrNotSnapshot, g.Prob[i], i)
		}
	}
	return checkFlags(g.Correct, "review_grades outcome", "grade")
}
