package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"streamer/online/model"
)

// DriftWatch is what the drift watch keeps across a restart or a
// takeover: each detector's alarms and the stream position before which
// it stays deaf after its last, the last alarm, and the labels the labels
// detector was shown since its last alarm, by example id (a restore
// renumbers the window's positions). In columns: label i was for example
// IDs[i], whose prediction was of class Classes[Predicted[i]], labeled
// Classes[Label[i]]; Fed[i] is '1' when the detector was given it, '0'
// when it came while the detector was deaf.
type DriftWatch struct {
	Deaf      map[string]int64 `json:"deaf,omitempty"`
	Alarms    map[string]int   `json:"alarms,omitempty"`
	Last      *DriftAlarm      `json:"last,omitempty"`
	Classes   []string         `json:"classes,omitempty"`
	IDs       []string         `json:"ids,omitempty"`
	Predicted []int            `json:"predicted,omitempty"`
	Label     []int            `json:"label,omitempty"`
	Fed       string           `json:"fed,omitempty"`
}

// DriftAlarm is an alarm of the drift watch, as /readyz and the events
// topic say it: the detector, its statistic and threshold, the stream
// position (examples read) and where the change is placed, the newest
// example's time and the clock's, the model in force, the reactions and
// the classes of the errors since the change.
type DriftAlarm struct {
	Detector  string      `json:"detector"`
	Statistic float64     `json:"statistic"`
	Threshold float64     `json:"threshold"`
	Examples  int64       `json:"examples"`
	ChangeAt  int64       `json:"change_at"`
	EventTime time.Time   `json:"event_time"`
	Time      time.Time   `json:"time"`
	Model     model.Stamp `json:"model"`
	Reactions []string    `json:"reactions,omitempty"`
	Classes   []string    `json:"classes,omitempty"`
}

// DriftLabel is one label the drift watch was shown: the example's id,
// the class predicted at its arrival, the label, and whether the labels
// detector was given it.
type DriftLabel struct {
	ID, Predicted, Label string
	Fed                  bool
}

// NewDriftWatch returns the watch's deaf positions, alarms, last alarm
// and labels, oldest first, in columns; nil when it has none of them.
func NewDriftWatch(deaf map[string]int64, alarms map[string]int, last *DriftAlarm, labels []DriftLabel) *DriftWatch {
	if len(deaf) == 0 && len(alarms) == 0 && last == nil && len(labels) == 0 {
		return nil
	}
	var classes dictionary
	w := &DriftWatch{Deaf: deaf, Alarms: alarms, Last: last,
		IDs: make([]string, len(labels)), Predicted: make([]int, len(labels)), Label: make([]int, len(labels))}
	for i, l := range labels {
		w.IDs[i], w.Predicted[i], w.Label[i] = l.ID, classes.of(l.Predicted), classes.of(l.Label)
	}
	w.Classes, w.Fed = classes.names, flags(len(labels), func(i int) bool { return labels[i].Fed })
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
	}
	if err := checkFlags(w.Fed, "drift fed", "label"); err != nil {
		return err
	}
	for name, at := range w.Deaf {
		if at < 0 {
			return fmt.Errorf("%w: drift deaf position %d of %q is negative", ErrNotSnapshot, at, name)
		}
	}
	for name, n := range w.Alarms {
		if n < 0 {
			return fmt.Errorf("%w: drift alarms %d of %q are negative", ErrNotSnapshot, n, name)
		}
	}
	if w.Last != nil && w.Total() == 0 {
		return fmt.Errorf("%w: drift holds a last alarm and counts none", ErrNotSnapshot)
	}
	return nil
}

// Total returns the alarms of every detector.
func (w *DriftWatch) Total() int {
	if w == nil {
		return 0
	}
	total := 0
	for _, n := range w.Alarms {
		total += n
	}
	return total
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
	if a := w.Last; a != nil {
		line += fmt.Sprintf("; %d alarms, the last of %s at example %d, model %d.%d", w.Total(), a.Detector, a.Examples, a.Model.Epoch, a.Model.Version)
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
