package snapshot

import "testing"

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name             string
		snap             Snapshot
		accuracy, recent float64
		scored           int
	}{
		{"no progress kept", Snapshot{Stats: Stats{Accuracy: 0.5}}, 0.5, 0, 0},
		{"progress", Snapshot{Stats: Stats{Accuracy: 0.1}, Progress: &Progress{Prequential: Prequential{
			Correct: 3, Total: 4, Recent: [][2]string{{"a", "a"}, {"a", "b"}}}}}, 0.75, 0.5, 2},
		{"nothing scored", Snapshot{Progress: &Progress{}}, 0, 0, 0},
	} {
		e := Describe(&tc.snap, 10)
		if e.Accuracy != tc.accuracy || e.RecentAccuracy != tc.recent || e.Scored != tc.scored || e.Bytes != 10 {
			t.Errorf("%s: %+v, want accuracy %v, recent %v over %d", tc.name, e, tc.accuracy, tc.recent, tc.scored)
		}
	}
}
