package snapshot

import "streamer/online"

// Stamp orders the snapshots of a model across learners: Epoch is the
// leadership term of the learner that made it (the lease's group
// generation; 0 for a process that runs alone, role all) and Version counts
// its solves. A snapshot is put in force only when its stamp is Newer than
// the one in force, so that a learner that lost its lease (paused past its
// session, then resumed) cannot replace the models of its successor: its
// epoch is older, whatever its version. It is the learner's online.Stamp:
// the model in force carries the stamp of the snapshot it came from.
type Stamp = online.Stamp

// Stamp returns the snapshot's (epoch, version).
func (s *Snapshot) Stamp() Stamp { return Stamp{Epoch: s.Epoch, Version: s.Version} }
