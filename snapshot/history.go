package snapshot

import "time"

// Entry is what a model's history shows of one of its snapshots: when it
// was made, from what window, and how well the stream's predictions fared
// up to then (prequential: each label scores the prediction made before it
// was known).
type Entry struct {
	Name string `json:"model"`
	// Epoch is the leadership term of the learner that made it (0 for a
	// process that runs alone) and Version its number in the epoch.
	Epoch     uint64    `json:"epoch"`
	Version   uint64    `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	Bytes     int       `json:"bytes"`
	Algorithm string    `json:"algorithm"`
	Classes   []string  `json:"classes"`
	// Examples, Labels and Solves count the stream up to the snapshot.
	Examples int64 `json:"examples"`
	Labels   int64 `json:"labels"`
	Solves   int64 `json:"solves"`
	// Window and Labeled describe the window the model was solved on.
	Window    int     `json:"window"`
	Labeled   int     `json:"labeled"`
	Objective float64 `json:"objective"`
	// Accuracy is the prequential accuracy over every scored label so far;
	// RecentAccuracy over the last scored labels (eval.horizon), and
	// Scored their number: 0 in a snapshot that kept no progress.
	Accuracy       float64 `json:"accuracy"`
	RecentAccuracy float64 `json:"recent_accuracy"`
	Scored         int     `json:"scored"`
}

// Describe returns the history entry of s, whose encoding is size bytes.
func Describe(s *Snapshot, size int) Entry {
	e := Entry{
		Name: s.Name, Epoch: s.Epoch, Version: s.Version, CreatedAt: s.CreatedAt, Bytes: size, Algorithm: s.Params.Algorithm,
		Classes: s.Model.Classes, Examples: s.Stats.Examples, Labels: s.Stats.Labels, Solves: s.Stats.Solves,
		Window: s.Stats.WindowSize, Labeled: s.Stats.Labeled, Objective: s.Stats.Objective, Accuracy: s.Stats.Accuracy,
	}
	if s.Progress == nil {
		return e
	}
	p := s.Progress.Prequential
	if p.Total > 0 {
		e.Accuracy = float64(p.Correct) / float64(p.Total)
	}
	right := 0
	for _, pair := range p.Recent {
		if pair[0] == pair[1] {
			right++
		}
	}
	if e.Scored = len(p.Recent); e.Scored > 0 {
		e.RecentAccuracy = float64(right) / float64(e.Scored)
	}
	return e
}

// Stamp returns the entry's (epoch, version).
func (e Entry) Stamp() Stamp { return Stamp{Epoch: e.Epoch, Version: e.Version} }
