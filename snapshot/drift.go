package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DriftWatch is what the drift watch keeps across a restart or a
// takeover: the labels its labels detector was shown since its last
// alarm, by example id (a restore renumbers the window's positions), and
// the stream positions before which each detector stays deaf after an
// alarm. In columns: label i was for example IDs[i], whose prediction
// was of class Classes[Predicted[i]], labeled Classes[Label[i]]; Fed[i]
// is '1' when the detector was given it, '0' when it came while the
// detector was deaf.
type DriftWatch struct {
	Deaf      map[string]int64 `json:"deaf,omitempty"`
	Classes   []string         `json:"classes,omitempty"`
	IDs       []string         `json:"ids,omitempty"`
	Predicted []int            `json:"predicted,omitempty"`
	Label     []int            `json:"label,omitempty"`
	Fed       string           `json:"fed,omitempty"`
}

// DriftLabel is one label the drift watch was shown: the example's id,
// the class predicted at its arrival, the label, and whether the labels
// detector was given it.
type DriftLabel struct {
	ID, Predicted, Label string
	Fed                  bool
}

// NewDriftWatch returns the watch's deaf positions and labels, oldest
// first, in columns; nil when it has neither.
func NewDriftWatch(deaf map[string]int64, labels []DriftLabel) *DriftWatch {
	if len(deaf) == 0 && len(labels) == 0 {
		return nil
	}
	w := &DriftWatch{Deaf: deaf, IDs: make([]string, len(labels)), Predicted: make([]int, len(labels)), Label: make([]int, len(labels))}
	index := map[string]int{}
	class := func(c string) int {
		i, ok := index[c]
		if !ok {
			i = len(w.Classes)
			index[c] = i
			w.Classes = append(w.Classes, c)
		}
		return i
	}
	fed := make([]byte, len(labels))
	for i, l := range labels {
		w.IDs[i], w.Predicted[i], w.Label[i], fed[i] = l.ID, class(l.Predicted), class(l.Label), '0'
		if l.Fed {
			fed[i] = '1'
		}
	}
	w.Fed = string(fed)
	return w
}

// Labels returns the labels, oldest first.
func (w *DriftWatch) Labels() []DriftLabel {
	if w == nil {
		return nil
	}
	out := make([]DriftLabel, len(w.IDs))
	for i, id := range w.IDs {
		out[i] = DriftLabel{ID: id, Predicted: w.Classes[w.Predicted[i]], Label: w.Classes[w.Label[i]], Fed: w.Fed[i] == '1'}
	}
	return out
}

// check verifies that the columns have one length, every class index
// names a class, every Fed is '0' or '1' and no deaf position is
// negative.
func (w *DriftWatch) check() error {
	if w == nil {
		return nil
	}
	n := len(w.IDs)
	if len(w.Predicted) != n || len(w.Label) != n || len(w.Fed) != n {
		return fmt.Errorf("%w: drift holds %d ids, %d predictions, %d labels and %d fed", ErrNotSnapshot, n, len(w.Predicted), len(w.Label), len(w.Fed))
	}
	for i := range n {
		for _, c := range []int{w.Predicted[i], w.Label[i]} {
			if c < 0 || c >= len(w.Classes) {
				return fmt.Errorf("%w: drift label %d names class %d of %d", ErrNotSnapshot, i, c, len(w.Classes))
			}
		}
		if w.Fed[i] != '0' && w.Fed[i] != '1' {
			return fmt.Errorf("%w: drift fed %q of label %d is not 0 or 1", ErrNotSnapshot, w.Fed[i], i)
		}
	}
	for name, at := range w.Deaf {
		if at < 0 {
			return fmt.Errorf("%w: drift deaf position %d of %q is negative", ErrNotSnapshot, at, name)
		}
	}
	return nil
}

// driftLines says what the drift watch takes up at a restore.
func driftLines(s *Snapshot) []string {
	if s.Progress == nil || s.Progress.Drift == nil {
		return nil
	}
	w := s.Progress.Drift
	line := fmt.Sprintf("drift\t%d labels since the labels detector's last alarm (%d given to it, %d wrong)",
		len(w.IDs), strings.Count(w.Fed, "1"), wrong(w))
	for _, name := range slices.Sorted(maps.Keys(w.Deaf)) {
		line += fmt.Sprintf("; %s deaf until example %d", name, w.Deaf[name])
	}
	return []string{line}
}

// wrong counts the labels that contradicted their predictions.
func wrong(w *DriftWatch) int {
	n := 0
	for i := range w.IDs {
		if w.Predicted[i] != w.Label[i] {
			n++
		}
	}
	return n
}
