package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveHTTP serves /metrics, /livez, /readyz and /v1/predict (predict.go)
// on http.listen until ctx ends. The returned channel is closed once the
// server has stopped.
func (s *Service) serveHTTP(ctx context.Context) (<-chan struct{}, error) {
	ln, err := net.Listen("tcp", s.cfg.HTTP.Listen)
	if err != nil {
		return nil, fmt.Errorf("http.listen %s: %w", s.cfg.HTTP.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.metrics.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", s.readyz)
	mux.HandleFunc("/v1/predict", s.predict)
	// Without an idle timeout, an application's keep-alive connections
	// would stay open for as long as it keeps them.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}
	s.httpAddr.Store(ln.Addr().String())
	s.log.Info("http", "listen", ln.Addr().String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("http server", "error", err)
		}
	}()
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx) //nolint:errcheck // best effort at exit
	})
	return done, nil
}

// HTTPAddr returns the address the HTTP endpoint listens on, once Run has
// started it.
func (s *Service) HTTPAddr() string {
	a, _ := s.httpAddr.Load().(string)
	return a
}

// readyz answers 200 once a model is in force and the consumer has its
// partitions, 503 with the reason before, and 503 while an input partition
// is stalled (liveness.go). A 503 also says what failed last, if an
// operation is being retried. A pinned model (pin.go) is said in the body.
func (s *Service) readyz(w http.ResponseWriter, _ *http.Request) {
	if reason := s.notReady(); reason != "" {
		if r, _ := s.retrying.Load().(string); r != "" {
			reason += "\nretrying " + r
		}
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
	if pin := s.pinStatus(); pin != "" {
		fmt.Fprintln(w, pin)
	}
}

// notReady returns why the service is not ready, "" when it is.
func (s *Service) notReady() string {
	m, _ := s.pipe.Learner().Scoring() // a pinned model scores without a newest one
	stall, _ := s.stall.Load().(string)
	switch waiting := s.waitingReason(); {
	case waiting != "":
		return waiting
	case !m.Ready():
		return "no model loaded yet"
	case !s.assigned.Load():
		return "input partitions not assigned yet"
	default:
		return stall
	}
}
