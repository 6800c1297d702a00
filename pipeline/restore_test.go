package pipeline

import (
	"fmt"
	"testing"
	"time"

	"streamer/ingest"
	"streamer/online/active"
)

// TestRestoredExamplesWaitForTheirLabels: an example read again at a
// restart is scored by the model in force, so that its late label grades
// that prediction; a label read again before it, or after it, is its
// label, and a label after the restart for it is a relabel, not graded.
func TestRestoredExamplesWaitForTheirLabels(t *testing.T) {
	p := textPipeline(t, Config{})
	src := Source{Topic: "examples"}
	restore := func(id, label, text string) {
		t.Helper()
		raw := fmt.Sprintf(`{"id":%q,"text":%q}`, id, text)
		if label != "" {
			raw = fmt.Sprintf(`{"id":%q,"label":%q,"text":%q}`, id, label, text)
		}
		ex, err := p.DecodeExample([]byte(raw), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Restore(ex, src); err != nil {
			t.Fatal(err)
		}
	}
	graded := func() int { return p.Stats().SSL.Total }
	_, labeled0 := p.learner.WindowSize()

	before := graded()
	restore("late", "", "free money winner")
	p.Label(ingest.Label{ID: "late", Label: "spam"}, Source{Topic: "labels"})
	if graded() != before+1 || p.Stats().SSL.Correct == 0 {
		t.Errorf("a late label for a restored example: %d graded, want %d (%+v)", graded(), before+1, p.Stats().SSL)
	}

	restore("own", "ham", "meeting agenda")
	p.RestoreLabel(ingest.Label{ID: "after", Label: "ham"}, Source{Topic: "labels"}) // not restored yet: waits
	restore("after", "", "meeting notes")
	restore("relabeled", "", "project lunch")
	p.RestoreLabel(ingest.Label{ID: "relabeled", Label: "ham"}, Source{Topic: "labels"})
	if _, labeled := p.learner.WindowSize(); labeled != labeled0+4 {
		t.Errorf("%d labeled rows, want %d: a label read again before its example was lost", labeled, labeled0+4)
	}
	before = graded()
	for _, id := range []string{"own", "after", "relabeled"} {
		p.Label(ingest.Label{ID: id, Label: "spam"}, Source{Topic: "labels"})
	}
	if graded() != before {
		t.Errorf("relabels after a restart graded: %d, want %d", graded(), before)
	}
}

// TestRestoredLabelsWithRequestsAreOnlyScored: with label requests on, a
// label for an example read before a restart may answer a request chosen
// before it, which the restart forgot: it is scored prequentially, and
// neither the labels detector nor the review thresholds count it.
func TestRestoredLabelsWithRequestsAreOnlyScored(t *testing.T) {
	for _, tc := range []struct {
		name     string
		requests active.Config
		watched  int
	}{
		{"requests off", active.Config{}, 1},
		{"requests on", active.Config{Budget: active.Budget{Fraction: 0.1}, Seed: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := textPipeline(t, Config{Requests: tc.requests})
			ex, err := p.DecodeExample([]byte(`{"id":"late","text":"free money winner"}`), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Restore(ex, Source{Topic: "examples"}); err != nil {
				t.Fatal(err)
			}
			before, watched := p.Stats().SSL.Total, len(p.watch.graded)
			p.Label(ingest.Label{ID: "late", Label: "spam"}, Source{Topic: "labels"})
			if got := p.Stats().SSL.Total - before; got != 1 {
				t.Errorf("%d labels scored, want 1", got)
			}
			if got := len(p.watch.graded) - watched; got != tc.watched {
				t.Errorf("%d labels watched for drift, want %d", got, tc.watched)
			}
		})
	}
}
