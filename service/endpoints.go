package service

import (
	"time"

	"streamer/ingest"
	"streamer/pipeline"
	"streamer/service/httpapi"
)

// listenHTTP listens on http.listen for the endpoints (package httpapi).
func (s *Service) listenHTTP() (*httpapi.Server, error) {
	api, err := httpapi.Listen(httpapi.Config{
		Listen: s.cfg.HTTP.Listen, MaxRequestBytes: s.cfg.Limits.MaxRequestBytes, MaxBatchExamples: s.cfg.Limits.MaxBatchExamples,
		Explain:         s.cfg.Predictions.Explain,
		ShutdownTimeout: s.cfg.Shutdown.Timeout, Registry: s.metrics.Registry, Log: s.log,
	}, s.endpoints)
	if err != nil {
		return nil, err
	}
	s.httpAddr.Store(api.Addr())
	s.log.Info("http", "listen", api.Addr())
	return api, nil
}

// HTTPAddr returns the address the HTTP endpoint listens on, once Run has
// started it.
func (s *Service) HTTPAddr() string {
	a, _ := s.httpAddr.Load().(string)
	return a
}

// endpoints is what the HTTP endpoints ask of the service.
type endpoints struct{ s *Service }

// Readiness is ready once a model is in force and the consumer has its
// partitions, not before, nor while the consumer waits for the schema
// registry or an input partition is stalled
// (consumer.Consumer.WatchLiveness). A pinned model (pin.go) and the
// drift watch's alarms (drift.go) are said; an alarm leaves it ready.
func (e endpoints) Readiness() httpapi.Readiness {
	s := e.s
	r := httpapi.Readiness{NotReady: s.notReady()}
	if r.NotReady != "" {
		r.Retrying, _ = s.retrying.Load().(string)
		return r
	}
	r.Pin = s.pinStatus()
	r.Drift = s.driftLine()
	return r
}

// DecodeExample decodes as the consumer does, and checks that the window
// could take the example.
func (e endpoints) DecodeExample(raw []byte, received time.Time, named bool) (ingest.Example, error) {
	decode := e.s.pipe.DecodeExample
	if named {
		decode = e.s.pipe.DecodeNamed
	}
	ex, err := decode(raw, received)
	if err == nil {
		err = e.s.pipe.Compatible(ex.Vector)
	}
	return ex, err
}

// Score scores with the model in force, learning nothing.
func (e endpoints) Score(exs []ingest.Example, src pipeline.Source, explain int) ([]pipeline.Prediction, error) {
	return e.s.pipe.ScoreExplained(exs, src, explain)
}

// notReady returns why the service is not ready, "" when it is.
func (s *Service) notReady() string {
	m := s.pipe.Learner().Scoring().Model // a pinned model scores without a newest one
	switch waiting := s.waitingReason(); {
	case waiting != "":
		return waiting
	case s.status.Registry() != "":
		return s.status.Registry()
	case !m.Ready():
		return "no model loaded yet"
	case !s.status.Assigned():
		return "input partitions not assigned yet"
	default:
		return s.status.Stall()
	}
}
