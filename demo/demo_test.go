package demo

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"streamer/service"
)

func TestDemo(t *testing.T) {
	sc, err := service.LoadConfig("", ServiceOverrides())
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

// TestFailedDemoJoinsTheService: a demo that fails while the service runs
// (here it times out while still producing) has stopped and waited for the
// service when Run returns, and leaves none of its goroutines behind.
func TestFailedDemoJoinsTheService(t *testing.T) {
	sc, err := service.LoadConfig("", ServiceOverrides())
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
