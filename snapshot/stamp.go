package snapshot

import "fmt"

// Stamp orders the snapshots of a model across learners: Epoch is the
// leadership term of the learner that made it (the lease's group
// generation; 0 for a process that runs alone, role all) and Version counts
// its solves. A snapshot is put in force only when its stamp is Newer than
// the one in force, so that a learner that lost its lease (paused past its
// session, then resumed) cannot replace the models of its successor: its
// epoch is older, whatever its version.
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

// Stamp returns the snapshot's (epoch, version).
func (s *Snapshot) Stamp() Stamp { return Stamp{Epoch: s.Epoch, Version: s.Version} }
