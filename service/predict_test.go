package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/config"
	"streamer/pipeline"
	"streamer/synth"
)

// post sends body to url and returns the status and the answer.
// httpSource is the source of a prediction made for POST /v1/predict: no
// topic partition, no offset.
var httpSource = pipeline.Source{Topic: "http", Partition: -1, Offset: -1}

func post(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	code, answer, err := tryPost(url, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, answer
}

// tryPost is post for goroutines other than the test's.
func tryPost(url, body string) (int, []byte, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// refusal is the body of a refused request.
type refusal struct {
	Errors []struct {
		Index  *int   `json:"index"`
		Reason string `json:"reason"`
		Field  string `json:"field"`
		Error  string `json:"error"`
	} `json:"errors"`
}

func decodeRefusal(t *testing.T, body []byte) refusal {
	t.Helper()
	var r refusal
	if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) == 0 {
		t.Fatalf("refusal %s: %v", body, err)
	}
	return r
}

// probes returns n examples of the test stream's kind, unlabeled, with
// their times, as the bodies of messages.
func probes(n int) []string {
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 99, Topics: 2})
	out := make([]string, n)
	for i := range out {
		d := gen.Next()
		v, _ := json.Marshal(map[string]string{"id": fmt.Sprint("probe-", i), "ts": d.TS.Format(time.RFC3339), "text": d.Text})
		out[i] = string(v)
	}
	return out
}

// nth returns the nth prediction of id on the topic, counted from 1, once
// there is one.
func (l *predictionLog) nth(id string, n int) (pipeline.Prediction, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.byID[id]
	if len(ps) < n {
		return pipeline.Prediction{}, false
	}
	return ps[n-1], true
}

// TestPredictOverHTTP scores examples over POST /v1/predict on a running
// service: 503 before a model; then, for the same examples and model
// version, the same predictions as the predictions topic, single and in a
// batch; bad requests refused with the dead letters' reasons; and nothing
// learned from any request.
func TestPredictOverHTTP(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs, "kafka.partitions=1", "limits.max_batch_examples=5",
		"limits.max_message_bytes=20000", "limits.max_request_bytes=40000")
	preds := readPredictions(t, ctx, addrs)
	svc, stop := runService(t, cfg)
	<-svc.Started()
	url := "http://" + svc.HTTPAddr() + "/v1/predict"
	pipe := svc.Pipeline()
	probe := probes(5)

	code, body := post(t, url, probe[0])
	if r := decodeRefusal(t, body); code != http.StatusServiceUnavailable || r.Errors[0].Reason != "no_model" ||
		!strings.HasPrefix(r.Errors[0].Error, "no model yet") {
		t.Fatalf("before a model: %d %s", code, body)
	}

	// Train, then show the probes to the topic once, so that they are in
	// the window, and wait until the model in force is the solution of the
	// window as it is: nothing is left to solve.
	stream := newStreamWriter(t, addrs, 7)
	trained := stream.write(t, ctx, 300)
	var msgs []kafka.Message
	for i, p := range probe {
		msgs = append(msgs, kafkaMessage("examples", fmt.Sprint("probe-", i), p))
	}
	if err := stream.w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every prediction", time.Minute, func() bool { return preds.has(trained) == len(trained) })
	waitFor(t, "a model solved on the whole window", time.Minute, func() bool {
		v := pipe.Learner().InForce().Stamp.Version
		_, seen := preds.nth("probe-4", 1)
		return v > 0 && seen && pipe.Progress().Solved
	})
	version := pipe.Learner().InForce().Stamp.Version

	// The probes again: a redelivery changes nothing in the window, so the
	// topic path scores them with the model in force, and no solve
	// follows.
	if err := stream.w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	topic := make([]pipeline.Prediction, len(probe))
	waitFor(t, "the probes' second predictions", time.Minute, func() bool {
		for i := range probe {
			var ok bool
			if topic[i], ok = preds.nth(fmt.Sprint("probe-", i), 2); !ok {
				return false
			}
		}
		return true
	})
	before := pipe.Stats()
	window, labeled := pipe.Learner().WindowSize()

	code, body = post(t, url, probe[0])
	var single pipeline.Prediction
	if err := json.Unmarshal(body, &single); code != http.StatusOK || err != nil {
		t.Fatalf("single: %d %s: %v", code, body, err)
	}
	code, body = post(t, url, "[\n"+strings.Join(probe, ",\n")+"]")
	var batch []pipeline.Prediction
	if err := json.Unmarshal(body, &batch); code != http.StatusOK || err != nil || len(batch) != len(probe) {
		t.Fatalf("batch: %d %s: %v", code, body, err)
	}
	if now := pipe.Learner().InForce().Stamp.Version; now != version {
		t.Fatalf("model version moved from %d to %d with nothing to learn", version, now)
	}
	for i, got := range append([]pipeline.Prediction{single}, batch...) {
		want := topic[max(i-1, 0)]
		if got.Source != httpSource || got.ModelVersion != version || got.Label == nil {
			t.Fatalf("HTTP prediction %d: %+v, want model version %d from %+v", i, got, version, httpSource)
		}
		got.Source = want.Source
		if !reflect.DeepEqual(got, want) {
			g, _ := got.Marshal()
			w, _ := want.Marshal()
			t.Errorf("HTTP prediction %d: %s\ntopic prediction: %s", i, g, w)
		}
	}

	// An example without a time takes the request's.
	start := time.Now().Truncate(time.Second)
	code, body = post(t, url, `{"id": "no-time", "text": "free offer click now"}`)
	if err := json.Unmarshal(body, &single); code != http.StatusOK || err != nil || single.TS.Before(start) || single.TS.After(time.Now()) {
		t.Fatalf("without a time: %d %s: %v", code, body, err)
	}

	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			name, body string
			code       int
			reason     string
			index      int // -1: none
		}{
			{"malformed JSON", `{"id": "m1", "text": "unterminated`, 400, "malformed_json", -1},
			{"malformed array", `[` + probe[0] + `, {"id"`, 400, "malformed_json", -1},
			{"wrong type", `{"id": 12, "text": "a number for an id"}`, 400, "wrong_type", -1},
			{"not an object", `"text"`, 400, "wrong_type", -1},
			{"empty body", ``, 400, "malformed_json", -1},
			{"bad element", `[` + probe[0] + `, {"id": "b", "text": 5}]`, 400, "wrong_type", 1},
			{"array element not an object", `[` + probe[0] + `, 3]`, 400, "wrong_type", 1},
			{"no payload", `[` + probe[0] + `, ` + probe[1] + `, {"id": "n"}]`, 400, "no_payload", 2},
			{"vector the window cannot take", `{"id": "v", "vector": [1, 2, 3]}`, 400, "incompatible_vector", -1},
			{"too many examples", "[" + strings.Repeat(probe[0]+",", 5) + probe[0] + "]", 400, "too_many_examples", -1},
			{"oversized example", `{"id": "big", "text": "` + strings.Repeat("big ", 6000) + `"}`, 400, "oversized", -1},
			{"oversized body", `[` + strings.Repeat(" ", 40000) + `]`, 413, "oversized", -1},
		} {
			code, body := post(t, url, c.body)
			if code != c.code {
				t.Errorf("%s: %d %s, want %d", c.name, code, body, c.code)
				continue
			}
			e := decodeRefusal(t, body).Errors[0]
			index := -1
			if e.Index != nil {
				index = *e.Index
			}
			if e.Reason != c.reason || index != c.index {
				t.Errorf("%s: %s, want reason %s at index %d", c.name, body, c.reason, c.index)
			}
		}
		if _, body := post(t, url, " \n"); !strings.Contains(string(body), "request body is empty") {
			t.Errorf("an empty body: %s", body)
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("GET: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})

	// Nothing was learned: not the window, not its labels, not a count,
	// and the model in force is still the solution of the window.
	code, _ = post(t, url, `{"id": "labeled", "text": "free offer", "label": "spam"}`)
	if code != http.StatusOK {
		t.Fatalf("a labeled example: %d", code)
	}
	after := pipe.Stats()
	if w, l := pipe.Learner().WindowSize(); w != window || l != labeled || pipe.Learner().Contains("labeled") || pipe.Learner().Contains("no-time") {
		t.Errorf("window %d/%d labeled after the requests, %d/%d before", w, l, window, labeled)
	}
	if after.Examples != before.Examples || after.Predictions != before.Predictions || after.Labels != before.Labels ||
		!reflect.DeepEqual(after.SSL, before.SSL) || after.Join != before.Join || !pipe.Progress().Solved {
		t.Errorf("the pipeline moved: %+v\nbefore: %+v", after, before)
	}
	base := "http://" + svc.HTTPAddr()
	for sample, want := range map[string]float64{
		`streamer_http_predict_requests_total{code="200"}`: 4,
		`streamer_http_predict_requests_total{code="400"}`: 12,
		`streamer_http_predict_requests_total{code="405"}`: 1,
		`streamer_http_predict_requests_total{code="413"}`: 1,
		`streamer_http_predict_requests_total{code="503"}`: 1,
		`streamer_http_predicted_examples_total`:           float64(1 + len(probe) + 2),
		`streamer_http_predict_duration_seconds_count`:     19,
	} {
		if got := metric(t, base, sample); got != want {
			t.Errorf("%s %v, want %v", sample, got, want)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestPredictLimitsNameTheirKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ set, key string }{
		{"limits.max_batch_examples=0", "limits.max_batch_examples"},
		{"limits.max_request_bytes=1000", "limits.max_request_bytes"},
	} {
		if _, err := config.Load("", []string{c.set}); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("--set %s: err = %v, want it to name %s", c.set, err, c.key)
		}
	}
}

// TestPredictBesideTheStream scores batches from several clients while the
// service learns and solves (run it with -race): every answer is a 503
// before the first model and a 200 after, a batch is scored by one model,
// and no client sees the model version go back.
func TestPredictBesideTheStream(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	svc, stop := runService(t, testConfig(t, addrs, "kafka.partitions=1"))
	<-svc.Started()
	url := "http://" + svc.HTTPAddr() + "/v1/predict"
	body := "[" + strings.Join(probes(20), ",") + "]"
	stream := newStreamWriter(t, addrs, 11)
	clientsCtx, stopClients := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var scored atomic.Int64
	for c := range 3 {
		wg.Go(func() {
			var last uint64
			for clientsCtx.Err() == nil {
				code, answer, err := tryPost(url, body)
				if code == http.StatusServiceUnavailable && last == 0 {
					continue
				}
				var batch []pipeline.Prediction
				if err == nil {
					err = json.Unmarshal(answer, &batch)
				}
				if code != http.StatusOK || err != nil || len(batch) != 20 {
					t.Errorf("client %d: %d %s: %v", c, code, answer, err)
					return
				}
				scored.Add(1)
				for _, p := range batch {
					if p.ModelVersion != batch[0].ModelVersion || p.ModelVersion < last {
						t.Errorf("client %d: model version %d in a batch of %d, after %d", c, p.ModelVersion, batch[0].ModelVersion, last)
						return
					}
				}
				last = batch[0].ModelVersion
			}
		})
	}
	for range 6 {
		v := svc.Pipeline().Learner().InForce().Stamp.Version
		stream.write(t, ctx, 100)
		waitFor(t, "a solve", 30*time.Second, func() bool { now := svc.Pipeline().Learner().InForce().Stamp.Version; return now > v })
	}
	stopClients()
	wg.Wait()
	if scored.Load() == 0 {
		t.Error("no batch was scored")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
