package servicebench

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRequestBody: one example is sent bare, several as a JSON array,
// cycling through the bodies.
func TestRequestBody(t *testing.T) {
	bodies := []string{`{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`}
	if got := requestBody(bodies, 4, 1); got != bodies[1] {
		t.Errorf("single example 4 = %s", got)
	}
	var batch []map[string]string
	if err := json.Unmarshal([]byte(requestBody(bodies, 2, 4)), &batch); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range batch {
		ids = append(ids, e["id"])
	}
	if strings.Join(ids, "") != "cabc" {
		t.Errorf("batch of 4 from example 2: ids %v, want c a b c", ids)
	}
}

// TestPhaseReport: rates over the elapsed time, and latencies at the
// quantiles of the sorted requests.
func TestPhaseReport(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	rep := phaseReport(lat, 5, 2*time.Second)
	if rep.Requests != 100 || rep.RequestsPerSecond != 50 || rep.ExamplesPerSecond != 250 || rep.BatchSize != 5 {
		t.Errorf("rates %+v", rep)
	}
	if rep.P50Ms != 50 || rep.P99Ms != 99 {
		t.Errorf("p50 %v ms, p99 %v ms; want 50 and 99", rep.P50Ms, rep.P99Ms)
	}
	if empty := phaseReport(nil, 1, time.Second); empty.Requests != 0 || empty.P99Ms != 0 {
		t.Errorf("no requests: %+v", empty)
	}
}

// TestMeasureCountsFailuresApart: the requests answered 200 are measured,
// the others counted by status, each client sending its own.
func TestMeasureCountsFailuresApart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if strings.Contains(string(body), "bad") {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	var fails failures
	rep := measure(t.Context(), srv.URL, []string{`{"id":"ok"}`, `{"id":"bad"}`}, 1, 2, 200*time.Millisecond, &fails)
	n, statuses := fails.count()
	if rep.Requests == 0 || n == 0 || len(statuses) != 1 || statuses["400 Bad Request"] != int64(n) {
		t.Fatalf("%d measured, %d failed (%v)", rep.Requests, n, statuses)
	}
}
