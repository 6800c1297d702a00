package service

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"streamer/ingest"
	"streamer/online"
	"streamer/pipeline"
	"streamer/service/httpapi"
)

// TestRunOnce: a second call of Run returns ErrRunTwice, whether the
// first has returned or not.
func TestRunOnce(t *testing.T) {
	t.Parallel()
	svc, err := New(testConfig(t, []string{"127.0.0.1:1"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := svc.Run(ctx); err != nil {
		t.Fatalf("first Run, on an ended context: %v", err)
	}
	if err := svc.Run(context.Background()); !errors.Is(err, ErrRunTwice) {
		t.Fatalf("second Run = %v, want ErrRunTwice", err)
	}

	cluster := startCluster(t)
	r := startService(t, testConfig(t, cluster.Addrs()), testLogger(t))
	<-r.svc.Started()
	if err := r.svc.Run(context.Background()); !errors.Is(err, ErrRunTwice) {
		t.Fatalf("Run while running = %v, want ErrRunTwice", err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}

// heldScoring holds every Score of the endpoints it wraps until release
// is closed, and notes when one has returned.
type heldScoring struct {
	httpapi.Service
	entered chan struct{} // closed when the first Score begins
	release chan struct{}
	scored  atomic.Bool // a held Score has returned
}

func (h *heldScoring) Score(exs []ingest.Example, src pipeline.Source, explain int) ([]pipeline.Prediction, error) {
	select {
	case <-h.entered:
	default:
		close(h.entered)
	}
	<-h.release
	defer h.scored.Store(true)
	return h.Service.Score(exs, src, explain)
}

// TestRunWaitsForARequestInFlight holds a POST /v1/predict in its
// scoring past the end of Run's context: the service stops listening and
// its role stops, but Run returns only once the request is answered.
func TestRunWaitsForARequestInFlight(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	var logs lockedBuffer
	svc, err := New(testConfig(t, cluster.Addrs()), newTextLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	held := &heldScoring{Service: svc.endpoints, entered: make(chan struct{}), release: make(chan struct{})}
	svc.endpoints = held
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var answeredAtReturn atomic.Bool
	ran := make(chan error, 1)
	go func() {
		err := svc.Run(ctx)
		answeredAtReturn.Store(held.scored.Load())
		ran <- err
	}()
	defer func() {
		select {
		case <-held.release:
		default:
			close(held.release)
		}
	}()
	<-svc.Started()

	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+svc.HTTPAddr()+"/v1/predict", "application/json", strings.NewReader(`{"id": "held", "text": "cheap pills now"}`))
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case <-held.entered:
	case <-time.After(time.Minute):
		t.Fatal("the request never reached the scoring")
	}
	cancel()
	waitFor(t, "the listener to close", time.Minute, func() bool {
		c, err := net.DialTimeout("tcp", svc.HTTPAddr(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	waitFor(t, "the role to stop", time.Minute, func() bool { return strings.Contains(logs.String(), "msg=stopped") })
	select {
	case err := <-ran:
		t.Fatalf("Run returned (%v) with a request in flight", err)
	default:
	}
	close(held.release)
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return once the request was answered")
	}
	if !answeredAtReturn.Load() {
		t.Fatal("Run returned before the request in flight was scored")
	}
	// Before any model, the scoring answers 503.
	if code := <-answered; code != http.StatusServiceUnavailable {
		t.Fatalf("the request in flight at shutdown was answered %d, want 503 (no model yet)", code)
	}
}

// TestRunEndsWhenTheHandOffStops: the window's hand-off cannot start
// (another runs on the learner), which stops it for good: Run ends with
// its error, naming it, without waiting for its context.
func TestRunEndsWhenTheHandOffStops(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	svc, err := New(testConfig(t, cluster.Addrs()), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	other, stopOther := context.WithCancel(context.Background())
	handedOff := make(chan error, 1)
	go func() {
		for {
			// A probe below may hold the hand-off for a moment: start
			// again until this one holds it.
			if err := svc.Pipeline().Learner().Run(other, nil); !errors.Is(err, online.ErrRunning) {
				handedOff <- err
				return
			}
		}
	}()
	defer func() { stopOther(); <-handedOff }()
	ended, end := context.WithCancel(context.Background())
	end() // a hand-off that starts on it stops at once
	waitFor(t, "the other hand-off", time.Minute, func() bool {
		return errors.Is(svc.Pipeline().Learner().Run(ended, nil), online.ErrRunning)
	})

	ran := make(chan error, 1)
	go func() { ran <- svc.Run(context.Background()) }()
	select {
	case err := <-ran:
		if !errors.Is(err, online.ErrRunning) || !strings.Contains(err.Error(), "hand-off") {
			t.Fatalf("Run = %v, want the hand-off's online.ErrRunning", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run went on without its hand-off")
	}
}
