package snapshot

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestProgressRoundTrip keeps the prequential state and the ids of the
// labels drift forgot through the codec, and
// a snapshot without it (as written before it was kept) decodes with none.
func TestProgressRoundTrip(t *testing.T) {
	s := testSnapshot(2, 50, 1, 7)
	s.Progress = &Progress{
		Solved: true,
		Prequential: Prequential{
			Correct: 9, Total: 11, TruePositives: map[string]int{"spam": 5, "ham": 4},
			FalsePositives: map[string]int{"spam": 2}, FalseNegatives: map[string]int{"ham": 2},
			Recent: [][2]string{{"spam", "spam"}, {"spam", "ham"}}, Unscored: 3,
			Curve: []CurvePoint{{Labels: 10, Examples: 400, Accuracy: 0.8, RecentAccuracy: 0.8}}, Examples: 450,
		},
		Baseline:  &Prequential{Correct: 7, Total: 11},
		Unlabeled: []string{"ex-3", "ex-9"},
	}
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Progress, s.Progress) {
		t.Fatalf("progress after a round trip %+v, want %+v", got.Progress, s.Progress)
	}
	var summary strings.Builder
	if err := Summarize(&summary, got); err != nil || !strings.Contains(summary.String(), "2 labels of window rows, forgotten at drift alarms") {
		t.Errorf("summary without the forgotten labels (%v):\n%s", err, summary.String())
	}
	s.Progress = nil
	old, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(old, []byte(`"progress"`)) {
		t.Fatal("a snapshot without progress names it in its header")
	}
	if got, err := Decode(old); err != nil || got.Progress != nil {
		t.Fatalf("snapshot without progress decoded as %+v, %v", got.Progress, err)
	}
}
