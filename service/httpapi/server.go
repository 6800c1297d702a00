package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"streamer/ingest"
	"streamer/pipeline"
)

// Service is what the endpoints ask of the service.
type Service interface {
	// Readiness says whether the service is ready to serve (/readyz).
	Readiness() Readiness
	// DecodeExample decodes an example of a request as the consumer
	// decodes a record of the examples topic, and checks that the model
	// can take it; an example without a time takes received. named also
	// names its hashed features, for an explanation.
	DecodeExample(raw []byte, received time.Time, named bool) (ingest.Example, error)
	// Score scores the examples with the model in force, the same one for
	// all, each explained by explain terms and neighbours (none for 0); it
	// fails when there is no model yet.
	Score(exs []ingest.Example, src pipeline.Source, explain int) ([]pipeline.Prediction, error)
}

// Readiness is what /readyz answers.
type Readiness struct {
	// NotReady says why the service is not ready; "" when it is.
	NotReady string
	// Retrying is the last failure of an operation being retried; "" when
	// none is.
	Retrying string
	// Pin says which model scores while the model is pinned; "" when it is
	// not.
	Pin string
	// Drift says what the drift watch found; "" when it is off. An alarm
	// does not make the service unready.
	Drift string
}

// Config configures the endpoints. Every field is required but Log.
type Config struct {
	// Listen is the address to listen on.
	Listen string
	// MaxRequestBytes bounds the body of a request to /v1/predict.
	MaxRequestBytes int
	// MaxBatchExamples bounds the examples of a request to /v1/predict.
	MaxBatchExamples int
	// Explain is the number of terms and neighbours that explain a
	// prediction of /v1/predict without an explain parameter, and at
	// least DefaultExplain with explain=true.
	Explain int
	// ShutdownTimeout bounds the wait for the requests in flight when
	// Serve's context ends; their connections are closed then, and Serve
	// still waits for their handlers to return.
	ShutdownTimeout time.Duration
	// Registry is served on /metrics; the endpoints' own metrics are
	// registered on it.
	Registry *prometheus.Registry
	// Log receives the server's errors; nil discards them.
	Log *slog.Logger
}

// Server serves the endpoints on a listener of its own.
type Server struct {
	cfg      Config
	svc      Service
	ln       net.Listener
	srv      *http.Server
	metrics  metrics
	scoring  chan struct{} // a slot per /v1/predict request read or scored at once
	inFlight inFlight
}

// Listen listens on cfg.Listen; Serve serves there.
func Listen(cfg Config, svc Service) (*Server, error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("http.listen %s: %w", cfg.Listen, err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, svc: svc, ln: ln, metrics: newMetrics(cfg.Registry), scoring: make(chan struct{}, predictSlots())}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", s.readyz)
	mux.HandleFunc("/v1/predict", s.predict)
	// Without an idle timeout, an application's keep-alive connections
	// would stay open for as long as it keeps them.
	s.srv = &http.Server{Handler: s.track(mux), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until ctx ends, then shuts the server down: it stops
// listening, waits up to cfg.ShutdownTimeout for the requests in flight,
// closes the connections still open, and returns once every handler has
// returned. It returns an error only when the server failed on its own.
func (s *Server) Serve(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(s.ln) }()
	var err error
	select {
	case err = <-served:
		// Failed on its own: Shutdown still closes what it left open.
		err = fmt.Errorf("serve http on %s: %w", s.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if serr := s.srv.Shutdown(sctx); serr != nil {
		s.cfg.Log.Warn("http requests still in flight at the shutdown deadline; their connections are closed", "error", serr)
		s.srv.Close()
	}
	if err == nil {
		// http.Server.Serve returns as soon as Shutdown begins.
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = fmt.Errorf("serve http on %s: %w", s.Addr(), serr)
		}
	}
	// Shutdown waits for the connections to go idle, Close for none:
	// a handler may still run on a connection Close cut.
	s.inFlight.wait()
	return err
}

// track counts the requests in flight, for Serve to wait for.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.add(1)
		defer s.inFlight.add(-1)
		h.ServeHTTP(w, r)
	})
}

// inFlight counts the handlers running. Unlike a sync.WaitGroup, it may
// count one more while it is waited for.
type inFlight struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond // signaled when n drops to 0
}

func (f *inFlight) add(d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n += d
	if f.n == 0 && f.idle != nil {
		f.idle.Broadcast()
	}
}

// wait returns once no handler runs.
func (f *inFlight) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle == nil {
		f.idle = sync.NewCond(&f.mu)
	}
	for f.n > 0 {
		f.idle.Wait()
	}
}

// readyz answers 200 once the service says it is ready, 503 with the
// reason before, and then also what failed last, if an operation is being
// retried. A pinned model and the drift watch are said in the body.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	r := s.svc.Readiness()
	if r.NotReady != "" {
		reason := r.NotReady
		if r.Retrying != "" {
			reason += "\nretrying " + r.Retrying
		}
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
	for _, line := range []string{r.Pin, r.Drift} {
		if line != "" {
			fmt.Fprintln(w, line)
		}
	}
}
