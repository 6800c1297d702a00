package snapshot

import (
	"testing"
	"time"
)

func TestAnnouncementRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 22, 23, 9, 11, 0, time.UTC)
	a := Announcement{Name: "m", Epoch: 2, Version: 7, CreatedAt: at, Algorithm: "tsvm", Window: 5500, Labeled: 250, Objective: 12.5,
		Origin: OriginRestore, From: &Stamp{Epoch: 1, Version: 7}}
	data, err := EncodeAnnouncement(a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeAnnouncement(data)
	if err != nil || b.Stamp() != a.Stamp() || *b.From != *a.From || b.Window != 5500 || !b.CreatedAt.Equal(at) {
		t.Fatalf("round trip: %+v, %v; want %+v", b, err, a)
	}
	if _, err := EncodeAnnouncement(Announcement{Name: "m"}); err == nil {
		t.Error("an announcement of version 0 was encoded")
	}
	for _, bad := range []string{`{`, `{"model": "m"}`, `{"version": 3}`} {
		if _, err := DecodeAnnouncement([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// TestVersions: one row per stamp, by epoch then version; a version with
// a snapshot can be pinned, one only announced cannot; the announcement
// says when and on what the model was solved.
func TestVersions(t *testing.T) {
	at := time.Date(2026, 11, 22, 23, 9, 11, 0, time.UTC)
	entries := []Entry{
		{Name: "m", Epoch: 0, Version: 5, Algorithm: "auto", Window: 5000, Labeled: 200, Examples: 9000, Bytes: 100},
		{Name: "m", Epoch: 1, Version: 2, Window: 10},
	}
	announced := []Announcement{
		{Name: "m", Epoch: 0, Version: 7, CreatedAt: at, Algorithm: "tsvm", Window: 5500, Labeled: 250, Origin: OriginSolve},
		{Name: "m", Epoch: 0, Version: 5, CreatedAt: at, Algorithm: "tsvm", Window: 5000, Labeled: 200, Origin: OriginSolve},
		{Name: "m", Epoch: 0, Version: 6, CreatedAt: at, Window: 5250, Origin: OriginSolve},
	}
	vs := Versions(entries, announced)
	var got []Stamp
	for _, v := range vs {
		got = append(got, v.Stamp())
	}
	want := []Stamp{{Version: 5}, {Version: 6}, {Version: 7}, {Epoch: 1, Version: 2}}
	if len(got) != len(want) {
		t.Fatalf("stamps %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("stamps %v, want %v", got, want)
		}
	}
	if v := vs[0]; !v.Snapshot || !v.Announced || v.Algorithm != "tsvm" || v.Examples != 9000 || !v.CreatedAt.Equal(at) {
		t.Errorf("version 5, snapshot and announcement: %+v", v)
	}
	if v := vs[2]; v.Snapshot || !v.Announced || v.Window != 5500 || v.Labeled != 250 || v.Origin != OriginSolve {
		t.Errorf("version 7, announced only: %+v", v)
	}
	if v := vs[3]; !v.Snapshot || v.Announced {
		t.Errorf("epoch 1 version 2, a snapshot of before announcements: %+v", v)
	}
}
