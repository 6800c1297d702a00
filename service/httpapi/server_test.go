package httpapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"streamer/ingest"
	"streamer/pipeline"
)

// heldService is ready, decodes anything and holds every Score until
// release is closed.
type heldService struct {
	entered     chan struct{} // closed when a Score begins
	enteredOnce sync.Once
	release     chan struct{}
}

func newHeldService() *heldService {
	return &heldService{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldService) Readiness() Readiness { return Readiness{} }

func (h *heldService) DecodeExample(raw []byte, received time.Time, _ bool) (ingest.Example, error) {
	return ingest.Example{ID: string(raw), TS: received}, nil
}

func (h *heldService) Score(exs []ingest.Example, src pipeline.Source, _ int) ([]pipeline.Prediction, error) {
	h.enteredOnce.Do(func() { close(h.entered) })
	<-h.release
	return make([]pipeline.Prediction, len(exs)), nil
}

// serving starts Serve on a held service and returns the server, the
// service, a cancel of Serve's context, and Serve's result.
func serving(t *testing.T, shutdown time.Duration) (*Server, *heldService, context.CancelFunc, <-chan error) {
	t.Helper()
	svc := newHeldService()
	srv, err := Listen(Config{Listen: "127.0.0.1:0", MaxRequestBytes: 1 << 10, MaxBatchExamples: 4,
		ShutdownTimeout: shutdown, Registry: prometheus.NewRegistry()}, svc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	exited := make(chan struct{})
	go func() { defer close(exited); served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-svc.release:
		default:
			close(svc.release)
		}
		<-exited
	})
	return srv, svc, cancel, served
}

// postHeld posts an example and returns the status, or the error, once
// the request ends.
func postHeld(url string) <-chan error {
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"id": "a", "text": "held"}`))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = errors.New(resp.Status)
			}
		}
		done <- err
	}()
	return done
}

// until polls cond until it holds, or fails the test after a minute.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitEntered(t *testing.T, svc *heldService) {
	t.Helper()
	select {
	case <-svc.entered:
	case <-time.After(time.Minute):
		t.Fatal("the request never reached Score")
	}
}

func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err != nil
}

// TestServeWaitsForTheRequestsInFlight: once Serve's context ends, the
// server stops listening at once, but Serve returns only after the
// request it was scoring is answered, and the client gets its answer.
func TestServeWaitsForTheRequestsInFlight(t *testing.T) {
	srv, svc, cancel, served := serving(t, time.Minute)
	answered := postHeld("http://" + srv.Addr() + "/v1/predict")
	waitEntered(t, svc)
	cancel()
	until(t, "the listener to close", func() bool { return refused(srv.Addr()) })
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	default:
	}
	close(svc.release)
	if err := <-answered; err != nil {
		t.Fatalf("the request in flight at shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestServeWaitsForHandlersPastItsDeadline: a request still in flight at
// the shutdown deadline has its connection closed, yet Serve returns only
// once its handler has.
func TestServeWaitsForHandlersPastItsDeadline(t *testing.T) {
	srv, svc, cancel, served := serving(t, 10*time.Millisecond)
	answered := postHeld("http://" + srv.Addr() + "/v1/predict")
	waitEntered(t, svc)
	cancel()
	select {
	case err := <-answered:
		if err == nil {
			t.Fatal("the request held past the deadline was answered")
		}
	case <-time.After(time.Minute):
		t.Fatal("the connection of the request held past the deadline was not closed")
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) while a handler runs", err)
	default:
	}
	close(svc.release)
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
