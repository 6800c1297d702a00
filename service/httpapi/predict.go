package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"streamer/ingest"
	"streamer/pipeline"
)

// source is the source of a prediction made for POST /v1/predict: no
// topic partition, no offset.
var source = pipeline.Source{Topic: "http", Partition: -1, Offset: -1}

// predictBodyTimeout bounds reading a request body, so that a client that
// sends slowly cannot hold a handler.
const predictBodyTimeout = 30 * time.Second

// predictSlots is how many /v1/predict requests are read and scored at
// once; the others wait for a slot before their body is read, so that the
// bodies held at once stay under predictSlots × limits.max_request_bytes.
// Scoring is bound by the CPU, so more would not answer sooner.
func predictSlots() int { return 4 * runtime.GOMAXPROCS(0) }

// Reasons of a refused request that are about the request, not about one
// example; the others are the dead letters' (pipeline.RefusalReason).
const (
	reasonTooManyExamples  = "too_many_examples"
	reasonMethodNotAllowed = "method_not_allowed"
	reasonNoModel          = "no_model"
	reasonUnreadableBody   = "unreadable_body"
	reasonBadParameter     = "bad_parameter"
)

// DefaultExplain is the number of terms and neighbours of an explanation
// asked for by explain=true, when predictions.explain asks for fewer.
const DefaultExplain = 5

// maxExplain bounds explain=K.
const maxExplain = 100

// explain returns the number of terms and neighbours the request's
// explain parameter asks for: true (DefaultExplain, or the configured
// number if larger), false or 0 (none), or a number; absent, the
// configured number.
func (s *Server) explain(r *http.Request) (int, error) {
	v := r.URL.Query().Get("explain")
	switch v {
	case "":
		return s.cfg.Explain, nil
	case "true":
		return max(s.cfg.Explain, DefaultExplain), nil
	case "false":
		return 0, nil
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 0 || k > maxExplain {
		return 0, fmt.Errorf("explain=%s: want true, false or a number of terms in [0, %d]", v, maxExplain)
	}
	return k, nil
}

// requestError is one entry of the body of a refused request.
type requestError struct {
	// Index is the example's place in a batch; absent for a single
	// example and for what is wrong with the whole request.
	Index  *int   `json:"index,omitempty"`
	Reason string `json:"reason"`
	Field  string `json:"field,omitempty"`
	Error  string `json:"error"`
}

// predict answers POST /v1/predict: the body is an example or a JSON array
// of examples, in the schema of the examples topic and under the same
// decoder and limits; the answer is a prediction or an array of them,
// made by the model in force, all by the same one. Nothing is learned from
// a request. A request with any bad example is refused whole (400) with
// the reason of each, as the dead letters' dlq-reason header would give
// it; 413 when the body is over limits.max_request_bytes; 503 before the
// first model.
func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	code, scored := s.servePredict(w, r, received)
	s.metrics.requests.WithLabelValues(strconv.Itoa(code)).Inc()
	s.metrics.examples.Add(float64(scored))
	s.metrics.seconds.Observe(time.Since(received).Seconds())
}

// servePredict answers a request and returns the status and the number of
// examples scored.
func (s *Server) servePredict(w http.ResponseWriter, r *http.Request, received time.Time) (int, int) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return refuse(w, http.StatusMethodNotAllowed, requestError{Reason: reasonMethodNotAllowed, Error: r.Method + " /v1/predict: only POST"}), 0
	}
	select {
	case s.scoring <- struct{}{}:
		defer func() { <-s.scoring }()
	case <-r.Context().Done():
		return refuse(w, http.StatusBadRequest, requestError{Reason: reasonUnreadableBody, Error: "the client went away before its body was read"}), 0
	}
	body, err := s.readBody(w, r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return refuse(w, http.StatusRequestEntityTooLarge, requestError{Reason: string(ingest.ReasonOversized),
				Error: fmt.Sprintf("request body over limits.max_request_bytes %d", tooLarge.Limit)}), 0
		}
		return refuse(w, http.StatusBadRequest, requestError{Reason: reasonUnreadableBody, Error: err.Error()}), 0
	}
	explain, err := s.explain(r)
	if err != nil {
		return refuse(w, http.StatusBadRequest, requestError{Reason: reasonBadParameter, Field: "explain", Error: err.Error()}), 0
	}
	raws, batch, bad := s.splitBatch(body)
	if bad != nil {
		return refuse(w, http.StatusBadRequest, *bad), 0
	}
	exs, bads := s.decodeExamples(raws, batch, received, explain > 0)
	if len(bads) > 0 {
		return refuse(w, http.StatusBadRequest, bads...), 0
	}
	preds, err := s.svc.Score(exs, source, explain)
	if err != nil {
		return refuse(w, http.StatusServiceUnavailable, requestError{Reason: reasonNoModel, Error: err.Error()}), 0
	}
	if batch {
		return answer(w, http.StatusOK, preds), len(preds)
	}
	return answer(w, http.StatusOK, preds[0]), 1
}

func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	// A connection that cannot take a deadline is left to the server's
	// own timeouts.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(predictBodyTimeout))
	return io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.cfg.MaxRequestBytes)))
}

// splitBatch returns the examples of a body: the body itself when it is
// not an array (the decoder says what is wrong with it, if anything), else
// the array's elements, at most limits.max_batch_examples.
func (s *Server) splitBatch(body []byte) (raws []json.RawMessage, batch bool, bad *requestError) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, false, &requestError{Reason: string(ingest.ReasonMalformedJSON), Error: "request body is empty"}
	}
	if trimmed[0] != '[' {
		return []json.RawMessage{body}, false, nil
	}
	if err := json.Unmarshal(trimmed, &raws); err != nil {
		return nil, true, &requestError{Reason: string(ingest.ReasonMalformedJSON), Error: fmt.Sprintf("request body: %v", err)}
	}
	if n := len(raws); n > s.cfg.MaxBatchExamples {
		return nil, true, &requestError{Reason: reasonTooManyExamples,
			Error: fmt.Sprintf("%d examples, limits.max_batch_examples %d", n, s.cfg.MaxBatchExamples)}
	}
	return raws, true, nil
}

// decodeExamples decodes every example as the consumer would, and checks
// that the window could take it; an example without a time takes the
// request's. It returns the reason of each bad one.
func (s *Server) decodeExamples(raws []json.RawMessage, batch bool, received time.Time, named bool) ([]ingest.Example, []requestError) {
	exs := make([]ingest.Example, 0, len(raws))
	var bads []requestError
	for i, raw := range raws {
		ex, err := s.svc.DecodeExample(raw, received, named)
		if err == nil {
			exs = append(exs, ex)
			continue
		}
		bad := requestError{Reason: pipeline.RefusalReason(err), Error: err.Error()}
		var de *ingest.DecodeError
		if errors.As(err, &de) {
			bad.Field = de.Field
		}
		if batch {
			bad.Index = &i
		}
		bads = append(bads, bad)
	}
	return exs, bads
}

// refuse answers code with {"errors": [...]} and returns the status sent.
func refuse(w http.ResponseWriter, code int, errs ...requestError) int {
	return answer(w, code, struct {
		Errors []requestError `json:"errors"`
	}{errs})
}

// answer sends v as JSON with code and returns the status sent.
func answer(w http.ResponseWriter, code int, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n')) //nolint:errcheck // the client may be gone
	return code
}
