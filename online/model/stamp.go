package model

import "fmt"

// Stamp orders the models of a stream across learners: Epoch is the
// leadership term of the learner that solved the model (0 for a learner
// that runs alone) and Version numbers the models of the term in the
// order they were made. Two terms can both have a version 5; only the
// pair names one model, and no two models carry one pair: a learner
// announces each version before it scores (online.Announcer), and a
// restarted one numbers after the highest announced.
type Stamp struct {
	Epoch   uint64 `json:"epoch"`
	Version uint64 `json:"version"`
}

// Newer reports whether s comes strictly after than: a higher epoch, or
// the same epoch and a higher version.
func (s Stamp) Newer(than Stamp) bool {
	if s.Epoch != than.Epoch {
		return s.Epoch > than.Epoch
	}
	return s.Version > than.Version
}

func (s Stamp) String() string { return fmt.Sprintf("e%d/v%d", s.Epoch, s.Version) }

// SolvedOn describes the window a model was solved on: its rows, how many
// of them were labeled, and the objective the solve reached. A snapshot
// keeps it, so that a restored model still says what it was solved on.
type SolvedOn struct {
	Window, Labeled int
	Objective       float64
}
