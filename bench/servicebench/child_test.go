package servicebench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asFakeService makes the test binary act as a stand-in for `streamer
// run` when set, so that the harnesses' handling of child processes can be
// tested without the CLI. Not a STREAMER_ variable: those name
// configuration keys.
const asFakeService = "TEST_BINARY_IS_FAKE_STREAMER_RUN"

func TestMain(m *testing.M) {
	if os.Getenv(asFakeService) == "1" {
		os.Exit(fakeService(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeService is the stand-in: `run --set key=value ...`. It serves
// /readyz (200) and /metrics (two counters) on http.listen and exits 0 on
// SIGTERM. fake.exit=N exits at once with status N; fake.sigterm=ignore
// leaves it running after SIGTERM.
func fakeService(args []string) int {
	sets := map[string]string{}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--set" {
			k, v, _ := strings.Cut(args[i+1], "=")
			sets[k] = v
		}
	}
	if code := sets["fake.exit"]; code != "" {
		var n int
		fmt.Sscan(code, &n)
		return n
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ready") })
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE streamer_predictions_published_total counter\n"+
			"streamer_predictions_published_total{partition=\"0\"} 40\n"+
			"streamer_predictions_published_total{partition=\"1\"} 2\n"+
			"streamer_window_kept_ratio 0.5\n")
	})
	srv := &http.Server{Addr: sets["http.listen"], Handler: mux}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	for {
		select {
		case err := <-served:
			fmt.Fprintln(os.Stderr, "fake service:", err)
			return 2
		case <-term:
			if sets["fake.sigterm"] != "ignore" {
				srv.Close()
				<-served
				return 0
			}
		}
	}
}

// startFake starts the test binary as a fake service with sets.
func startFake(t *testing.T, sets ...string) *child {
	t.Helper()
	t.Setenv(asFakeService, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := startChild(exe, sets)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.kill() })
	return c
}

// TestChildStartsServesAndStops: a child is ready once its /readyz says
// so, its metrics can be scraped, and SIGTERM ends it cleanly.
func TestChildStartsServesAndStops(t *testing.T) {
	c := startFake(t)
	ctx := t.Context()
	if err := c.waitReady(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	m, err := scrape(ctx, c.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	if m["streamer_predictions_published_total"] != 42 || m["streamer_window_kept_ratio"] != 0.5 {
		t.Errorf("scraped %v", m)
	}
	if c.hasExited() {
		t.Fatal("the child exited while serving")
	}
	if err := c.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if !c.hasExited() || c.stop() != nil {
		t.Fatal("stop returned before the exit, or a second stop failed")
	}
}

// TestChildKilledAfterItsGrace: a child that ignores SIGTERM is killed
// once its grace has passed, and stop says so.
func TestChildKilledAfterItsGrace(t *testing.T) {
	c := startFake(t, "fake.sigterm=ignore")
	if err := c.waitReady(t.Context(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	c.grace = 200 * time.Millisecond
	err := c.stop()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("stop of a child that ignores SIGTERM: %v", err)
	}
	if !c.hasExited() {
		t.Fatal("stop returned before the child's exit")
	}
}

// TestChildThatExitsIsNeverReady: waitReady gives up at its timeout on a
// child that exited, and stop reports the exit status.
func TestChildThatExitsIsNeverReady(t *testing.T) {
	c := startFake(t, "fake.exit=3")
	if err := c.waitReady(t.Context(), 500*time.Millisecond); err == nil {
		t.Fatal("a child that exited was ready")
	}
	var exit *exec.ExitError
	if err := c.stop(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("stop of a child that exited with 3: %v", err)
	}
}

// TestPollUntil: a condition met is reported at once, one never met
// fails at the timeout, and an ended context ends the wait.
func TestPollUntil(t *testing.T) {
	ctx := t.Context()
	n := 0
	if err := pollUntil(ctx, time.Minute, func() bool { n++; return n == 3 }, "third call"); err != nil || n != 3 {
		t.Fatalf("pollUntil: %v after %d calls", err, n)
	}
	if err := pollUntil(ctx, 50*time.Millisecond, func() bool { return false }, "never"); err == nil || !strings.Contains(err.Error(), "never") {
		t.Fatalf("pollUntil of a condition never met: %v", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := pollUntil(ended, time.Minute, func() bool { return false }, "ended"); err == nil {
		t.Fatal("pollUntil went on after its context ended")
	}
	if sleepCtx(ended, time.Minute) {
		t.Fatal("sleepCtx slept through an ended context")
	}
	if !sleepCtx(ctx, time.Millisecond) {
		t.Fatal("sleepCtx did not sleep")
	}
}
