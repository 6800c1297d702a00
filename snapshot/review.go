package snapshot

import (
	"encoding/json"
	"fmt"
	"math"
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
