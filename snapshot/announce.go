package snapshot

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Announcement is the record of a model that a learner writes, without
// its weights, before the model scores anything: every (epoch, version)
// a prediction carries has one, though most versions never reach a
// snapshot (snapshot.every_solves, snapshot.every). A restore numbers its
// models after the highest version announced, so that no two models
// carry one stamp.
type Announcement struct {
	Name      string    `json:"model"`
	Epoch     uint64    `json:"epoch"`
	Version   uint64    `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// Algorithm is what solved the model (what auto chose); Window,
	// Labeled and Objective describe the window it was solved on.
	Algorithm string  `json:"algorithm"`
	Window    int     `json:"window"`
	Labeled   int     `json:"labeled"`
	Objective float64 `json:"objective"`
	// Origin says how the model came by its stamp; From is the stamp it
	// had before, with OriginRestore and OriginSeed.
	Origin string `json:"origin"`
	From   *Stamp `json:"from,omitempty"`
}

// The origins of an announced model.
const (
	// OriginSolve is a model a solve made.
	OriginSolve = "solve"
	// OriginRestore is a snapshot's model that a learner's new term put
	// in force under its epoch.
	OriginRestore = "restore"
	// OriginSeed is model.seed_file's model, numbered after the versions
	// announced before it.
	OriginSeed = "seed"
)

// Stamp returns the announced model's (epoch, version).
func (a Announcement) Stamp() Stamp { return Stamp{Epoch: a.Epoch, Version: a.Version} }

// EncodeAnnouncement returns the record value of a: JSON.
func EncodeAnnouncement(a Announcement) ([]byte, error) {
	if a.Name == "" || a.Version == 0 {
		return nil, fmt.Errorf("announcement of model %q version %d: a model and a version from 1 are needed", a.Name, a.Version)
	}
	return json.Marshal(a)
}

// DecodeAnnouncement reads a record value of EncodeAnnouncement.
func DecodeAnnouncement(data []byte) (Announcement, error) {
	var a Announcement
	if err := json.Unmarshal(data, &a); err != nil {
		return a, fmt.Errorf("announcement: %w", err)
	}
	if a.Name == "" || a.Version == 0 {
		return a, errors.New("announcement without a model or a version")
	}
	return a, nil
}

// Known is what is known of one version of a model: its announcement,
// the history entry of its snapshot, or both. Only a version with a
// snapshot can be put back in force (pinned): its weights are kept.
type Known struct {
	// Entry is the snapshot's history entry, or, for a version announced
	// only, its announced fields (the stream's counts and accuracy then
	// unknown). CreatedAt is when the model was announced, where it was.
	Entry
	Announced bool `json:"announced"`
	Snapshot  bool `json:"snapshot"`
	// Origin and From are the announcement's.
	Origin string `json:"origin,omitempty"`
	From   *Stamp `json:"from,omitempty"`
}

// Versions merges the history entries of a model's snapshots and the
// announcements of its versions into one row per (epoch, version), by
// epoch then version. A version announced twice (a write retried) is
// described as last announced.
func Versions(entries []Entry, announced []Announcement) []Known {
	byStamp := map[Stamp]*Known{}
	for _, e := range entries {
		byStamp[e.Stamp()] = &Known{Entry: e, Snapshot: true}
	}
	for _, a := range announced {
		v := byStamp[a.Stamp()]
		if v == nil {
			v = &Known{Entry: Entry{Name: a.Name, Epoch: a.Epoch, Version: a.Version}}
			byStamp[a.Stamp()] = v
		}
		v.Announced, v.Origin, v.From = true, a.Origin, a.From
		v.CreatedAt, v.Algorithm = a.CreatedAt, a.Algorithm
		v.Window, v.Labeled, v.Objective = a.Window, a.Labeled, a.Objective
	}
	out := make([]Known, 0, len(byStamp))
	for _, v := range byStamp {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b Known) int {
		return cmp.Or(cmp.Compare(a.Epoch, b.Epoch), cmp.Compare(a.Version, b.Version))
	})
	return out
}
