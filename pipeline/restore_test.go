package pipeline

import (
	"context"
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

// TestRecalledRequestsAfterARestart: requests read back after a restart
// are not asked again (nor is an example read again without its source),
// and a label for one answers it: an answer to a
// chosen request is scored but not watched for drift, a random one and an
// unasked label are both; a request answered before the restart marks
// its label chosen.
func TestRecalledRequestsAfterARestart(t *testing.T) {
	p := textPipeline(t, Config{Requests: active.Config{Budget: active.Budget{Fraction: 1}, Seed: 1}})
	texts := map[string]string{"chosen": "free money winner", "random": "cash prize money", "unasked": "free cash prize",
		"answered": "meeting agenda notes", "waiting": "lunch meeting project"}
	for id, text := range texts {
		ex, err := p.DecodeExample([]byte(fmt.Sprintf(`{"id":%q,"text":%q}`, id, text)), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Restore(ex, Source{Topic: "examples", Partition: 1, Offset: 7}); err != nil {
			t.Fatal(err)
		}
	}
	p.RestoreLabel(ingest.Label{ID: "answered", Label: "ham"}, Source{Topic: "labels"})
	now := time.Now()
	request := func(id, strategy string) LabelRequest {
		return LabelRequest{Request: active.Request{ID: id, Reason: active.Reason{Strategy: strategy}, Expires: now.Add(time.Hour)}}
	}
	recalled := p.RecallRequests([]LabelRequest{request("chosen", active.StrategyInformative), request("random", active.StrategyRandom),
		request("answered", active.StrategyInformative), request("waiting", active.StrategyInformative),
		request("gone", active.StrategyInformative)}, now)
	if recalled != 4 || !p.learner.IsChosen("answered") {
		t.Fatalf("recalled %d requests of examples in the window, want 4; the answered one chosen: %v", recalled, p.learner.IsChosen("answered"))
	}
	for _, tc := range []struct {
		id      string
		watched int
	}{{"chosen", 0}, {"random", 1}, {"unasked", 1}} {
		before, watched := p.Stats().SSL.Total, p.watch.graded.Len()
		p.Label(ingest.Label{ID: tc.id, Label: "spam"}, Source{Topic: "labels"})
		if got := p.Stats().SSL.Total - before; got != 1 {
			t.Errorf("%s: %d labels scored, want 1", tc.id, got)
		}
		if got := p.watch.graded.Len() - watched; got != tc.watched {
			t.Errorf("%s: %d labels watched for drift, want %d", tc.id, got, tc.watched)
		}
	}
	if st, _ := p.RequestStats(); st.Answered[active.StrategyInformative] != 1 || st.Answered[active.StrategyRandom] != 1 || st.Sent[active.StrategyInformative] != 0 {
		t.Errorf("request counts after the restart %+v: want the two answers after it only", st)
	}
	ex, err := p.DecodeExample([]byte(`{"id":"plain","text":"project lunch"}`), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(ex, Source{Topic: "examples", Partition: 1, Offset: 8}); err != nil {
		t.Fatal(err)
	}
	for range 60 {
		ex, err := p.DecodeExample([]byte(fmt.Sprintf(`{"id":"n%d","text":"meeting notes %d"}`, p.Stats().Examples, p.Stats().Examples)), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Example(ex, Source{Topic: "examples"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	plain := false
	for _, req := range p.Requests(now) {
		if _, ok := texts[req.ID]; ok {
			t.Errorf("%s requested again", req.ID)
		}
		if req.ID == "plain" {
			plain = true
			if req.Source.Partition != 1 || req.Source.Offset != 8 {
				t.Errorf("request of a restored example with source %+v", req.Source)
			}
		}
	}
	if !plain {
		t.Error("the restored example without a request or a label was not requested")
	}
}
