package snapshot

import (
	"fmt"

	"streamer/online/model"
)

// Stamp orders the snapshots of a model across learners: Epoch is the
// leadership term of the learner that made it (the lease's group
// generation; 0 for a process that runs alone, role all) and Version
// numbers its models (Announcement). A snapshot is put in force only when its stamp is Newer than
// the one in force, so that a learner that lost its lease (paused past its
// session, then resumed) cannot replace the models of its successor: its
// epoch is older, whatever its version. It is the learner's model.Stamp:
// the model in force carries the stamp of the snapshot it came from.
type Stamp = model.Stamp

// Stamp returns the snapshot's (epoch, version).
func (s *Snapshot) Stamp() Stamp { return Stamp{Epoch: s.Epoch, Version: s.Version} }

// Selector names one snapshot of a model, as a pin order or a replay asks
// for it: the version Version of the epoch Epoch, or, with AnyEpoch, the
// version Version of whichever epoch made it (the pin orders written
// before epochs were named); of several, the newest epoch.
type Selector struct {
	Stamp
	AnyEpoch bool
}

// Exactly selects the snapshot of stamp st.
func Exactly(st Stamp) Selector { return Selector{Stamp: st} }

// AnyEpochVersion selects version under whichever epoch made it.
func AnyEpochVersion(version uint64) Selector {
	return Selector{Stamp: Stamp{Version: version}, AnyEpoch: true}
}

// Matches reports whether the snapshot of stamp st is one sel names.
func (sel Selector) Matches(st Stamp) bool {
	return st.Version == sel.Version && (sel.AnyEpoch || st.Epoch == sel.Epoch)
}

func (sel Selector) String() string {
	if sel.AnyEpoch {
		return fmt.Sprintf("version %d", sel.Version)
	}
	return fmt.Sprintf("version %d of epoch %d", sel.Version, sel.Epoch)
}
