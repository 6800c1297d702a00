package demo

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"streamer/config"
	"streamer/synth"
)

func TestDemo(t *testing.T) {
	sc, err := config.Load("", ServiceOverrides())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Examples: 2000, Rate: 1000, LabelRate: 0.1, Seed: 3, Service: sc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Examples != 2000 || rep.Predictions < 2000 || rep.Labels < 100 {
		t.Fatalf("report %+v", rep)
	}
	if testing.Short() {
		return // under -race the solver is too slow to promise a model within the run
	}
	if rep.Solves == 0 || rep.Snapshots == 0 || rep.Accuracy < 0.7 || rep.SupervisedAccuracy == 0 {
		t.Fatalf("report %+v", rep)
	}
}

// TestDemoOfAPartlyLabeledFile streams a file whose every other example
// carries no label: the agreement is over the examples that carry one, and
// the report counts them.
func TestDemoOfAPartlyLabeledFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "half.jsonl")
	var b strings.Builder
	s := synth.NewTextStream(synth.TextStreamConfig{Seed: 4})
	for i := range 2000 {
		d := s.Next()
		m := map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text}
		if i%2 == 0 {
			m["label"] = d.Label
		}
		line, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := config.Load("", ServiceOverrides())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Data: path, Rate: 1000, LabelRate: 0.2, Seed: 3, Service: sc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Examples != 2000 || rep.ExamplesLabeled != 1000 || rep.Scored > rep.Labels {
		t.Fatalf("report %+v: want 2000 examples, 1000 of them labeled", rep)
	}
	// An agreement over all 2000 examples could not pass one half.
	if !testing.Short() && rep.Agreement <= 0.5 {
		t.Fatalf("agreement %.3f over the labeled examples, want more than 0.5: %+v", rep.Agreement, rep)
	}
}

// TestFailedDemoJoinsTheService: a demo that fails while the service runs
// (here it times out while still producing) has stopped and waited for the
// service when Run returns, and leaves none of its goroutines behind.
func TestFailedDemoJoinsTheService(t *testing.T) {
	sc, err := config.Load("", ServiceOverrides())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Examples: 1_000_000, Rate: 200, Timeout: 2 * time.Second, Service: sc}
	if _, err := Run(context.Background(), cfg, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline's", err)
	}
	if n := runningIn("streamer/service.(*Service).Run("); n > 0 {
		t.Fatalf("the service outlives the demo: %d goroutines in Service.Run", n)
	}
	// The service's own goroutines end with its Run; a reader it closed
	// may take a moment to let go of its connection.
	deadline := time.Now().Add(10 * time.Second)
	for runningIn("streamer/") > 1 { // this test's own goroutine
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the demo or the service outlive it:\n%s", stacks())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runningIn counts the goroutines with a frame whose name starts with fn.
func runningIn(fn string) int {
	n := 0
	for _, g := range strings.Split(stacks(), "\n\n") {
		if strings.Contains(g, "\n"+fn) {
			n++
		}
	}
	return n
}

func stacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
