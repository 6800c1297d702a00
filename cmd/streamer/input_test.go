package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"streamer/pipeline"
)

// streamerRun is a `streamer run` on the embedded broker, for the
// duration of a test.
type streamerRun struct {
	t      *testing.T
	logs   *logBuffer
	done   chan error
	cancel context.CancelFunc
	broker string
	http   string
}

// startRun runs `streamer run` with the --set overrides and waits until it
// consumes.
func startRun(t *testing.T, sets ...string) *streamerRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &streamerRun{t: t, logs: &logBuffer{}, done: make(chan error, 1), cancel: cancel}
	args := []string{"run", "--set", "kafka.brokers=embedded", "--set", "http.listen=127.0.0.1:0", "--set", "kafka.partitions=1"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := newRootCommand()
	cmd.SetOut(io.Discard)
	cmd.SetErr(r.logs)
	cmd.SetArgs(args)
	go func() { r.done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(r.stop)
	var started, listening map[string]any
	r.within("the service to consume", time.Minute, func() bool {
		_, consuming := r.logs.event("consuming")
		started, _ = r.logs.event("embedded Kafka cluster started")
		listening, _ = r.logs.event("http")
		return consuming && started != nil && listening != nil
	})
	addrs, _ := started["addrs"].([]any)
	r.broker, _ = addrs[0].(string)
	r.http, _ = listening["listen"].(string)
	return r
}

// within polls cond every 20ms until it holds, failing the test after
// timeout or when the command returns first.
func (r *streamerRun) within(what string, timeout time.Duration, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case err := <-r.done:
			r.done <- err
			r.t.Fatalf("streamer run returned (%v) while waiting for %s\n%s", err, what, r.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s\n%s", what, r.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop cancels the command and checks that it stopped cleanly; once.
func (r *streamerRun) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("streamer run: %v\n%s", err, r.logs.String())
		}
	case <-time.After(time.Minute):
		r.t.Errorf("streamer run did not stop\n%s", r.logs.String())
	}
}

// get returns the body of an HTTP endpoint of the service.
func (r *streamerRun) get(path string) string {
	resp, err := http.Get("http://" + r.http + path)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metric returns the value of a metric without labels, NaN-free: -1 when
// it is not there.
func (r *streamerRun) metric(name string) float64 {
	for _, line := range strings.Split(r.get("/metrics"), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var x float64
			fmt.Sscan(v, &x)
			return x
		}
	}
	return -1
}

// kcat runs the kcat command line client (librdkafka), failing the test
// on an error.
func kcat(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	out, err := kcatTry(stdin, args...)
	if err != nil {
		t.Fatalf("kcat %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func kcatTry(stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	return out, nil
}

func needKcat(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kcat is not installed; make tools installs it")
		}
		t.Skip("kcat is not installed (make tools installs it)")
	}
}

// moderationSets map the moderation team's posts:
//
//	{"post_id": 78, "body": "...", "author": {"name": "...", "followers": 12},
//	 "created_at": 1764331200, "verdict": "spam"}
var moderationSets = []string{
	"input.examples.id_numbers=true", "input.examples.ts=/created_at", "input.examples.ts_numbers=auto",
	"input.examples.text=/body", "input.examples.features=", "input.examples.feature_fields=followers=/author/followers",
	"input.examples.indices=", "input.examples.values=", "input.examples.vector=",
	"input.examples.label=/verdict", "input.examples.text_with_features=true",
	"input.labels.id_numbers=true", "input.labels.id=/post_id", "input.labels.label=/verdict",
}

// TestRunForeignJSONWithKcat: `streamer run` mapped onto the moderation
// team's JSON posts, fed by kcat, the record key as the id or not: every
// post is predicted, and the bad ones are dead-lettered with the reason
// and the pointer at fault.
func TestRunForeignJSONWithKcat(t *testing.T) {
	needKcat(t)
	for _, tt := range []struct {
		name string
		id   string // input.examples.id
		bad  map[string]string
	}{
		{name: "id field", id: "/post_id", bad: map[string]string{
			`{"body": "no id at all"}`:                         "dlq-reason=missing_id",
			`{"post_id": 900, "body": 7}`:                      "dlq-reason=wrong_type",
			`{"post_id": 901, "body": "x", "created_at": [1]}`: "dlq-reason=wrong_type",
		}},
		{name: "record key", id: "key", bad: map[string]string{
			`{"post_id": 900, "body": 7}`: "dlq-reason=wrong_type",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sets := append([]string{"input.examples.id=" + tt.id}, moderationSets...)
			if tt.id == "key" {
				sets = append(sets, "input.labels.id=key")
			}
			r := startRun(t, sets...)
			var examples, labels bytes.Buffer
			want := map[string]bool{}
			const n = 60
			for i := range n {
				words := []string{"cheap pills buy now", "lovely walk in the park", "win a prize today", "our meeting notes"}[i%4]
				post := map[string]any{"post_id": 1000 + i, "body": fmt.Sprintf("%s %d", words, i),
					"author": map[string]any{"name": "a", "followers": i % 7}, "created_at": 1764331200 + i}
				v, _ := json.Marshal(post)
				key := fmt.Sprintf("p-%d", i)
				fmt.Fprintf(&examples, "%s\t%s\n", key, v)
				if tt.id == "key" {
					want[key] = true
				} else {
					want[fmt.Sprint(1000+i)] = true
				}
				if i%3 == 0 {
					l, _ := json.Marshal(map[string]any{"post_id": 1000 + i, "verdict": []string{"spam", "ham"}[i%2]})
					fmt.Fprintf(&labels, "%s\t%s\n", key, l)
				}
			}
			for v := range tt.bad {
				fmt.Fprintf(&examples, "bad\t%s\n", v)
			}
			// The topics are the user's: they exist once the group's reader
			// has asked for them.
			r.within("the examples to be produced", time.Minute, func() bool {
				_, err := kcatTry(examples.Bytes(), "-P", "-b", r.broker, "-t", "examples", "-K", "\t")
				return err == nil
			})
			kcat(t, labels.Bytes(), "-P", "-b", r.broker, "-t", "labels", "-K", "\t")
			r.within("every post predicted", time.Minute, func() bool {
				return r.metric("streamer_predictions_published_total") >= n
			})
			r.within("the dead letters", time.Minute, func() bool {
				out, err := kcatTry(nil, "-C", "-b", r.broker, "-t", "examples-dlq", "-o", "beginning", "-e", "-q", "-f", "%h\t%s\n")
				return err == nil && strings.Count(string(out), "\n") >= len(tt.bad)
			})
			// Read before the run stops: its broker stops with it.
			out := kcat(t, nil, "-C", "-b", r.broker, "-t", "predictions", "-o", "beginning", "-e", "-q", "-f", "%k\t%s\n")
			got := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				key, value, _ := strings.Cut(line, "\t")
				var p pipeline.Prediction
				if err := json.Unmarshal([]byte(value), &p); err != nil || key != p.ID {
					t.Fatalf("prediction %q: %v", line, err)
				}
				if p.TS.Unix() < 1764331200 {
					t.Fatalf("prediction %s: ts %v, not the post's created_at", p.ID, p.TS)
				}
				got[p.ID] = true
			}
			for id := range want {
				if !got[id] {
					t.Fatalf("no prediction for %s (of %d)", id, len(got))
				}
			}
			dlq := string(kcat(t, nil, "-C", "-b", r.broker, "-t", "examples-dlq", "-o", "beginning", "-e", "-q", "-f", "%h\t%s\n"))
			for value, reason := range tt.bad {
				if !strings.Contains(dlq, value) || !containsLine(dlq, value, reason) {
					t.Errorf("dead letter of %s: want %s in\n%s", value, reason, dlq)
				}
			}
			if tt.id == "/post_id" && !containsLine(dlq, `{"body": "no id at all"}`, "/post_id: missing_id") {
				t.Errorf("the dead letter of a post without an id does not name /post_id:\n%s", dlq)
			}
			r.stop()
		})
	}
}

// containsLine reports whether a line of out holds both a and b.
func containsLine(out, a, b string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, a) && strings.Contains(line, b) {
			return true
		}
	}
	return false
}

const (
	postAvroSchema = `{"type": "record", "name": "Post", "namespace": "moderation", "fields": [
	{"name": "post_id", "type": "long"},
	{"name": "body", "type": "string"},
	{"name": "author", "type": {"type": "record", "name": "Author", "fields": [
		{"name": "name", "type": "string"}, {"name": "followers", "type": "int"}]}},
	{"name": "created_at", "type": "long"},
	{"name": "verdict", "type": ["null", "string"], "default": null}]}`
	verdictAvroSchema = `{"type": "record", "name": "Verdict", "namespace": "moderation", "fields": [
	{"name": "post_id", "type": "long"}, {"name": "verdict", "type": "string"}]}`
)

type avroPost struct {
	PostID    int64      `avro:"post_id"`
	Body      string     `avro:"body"`
	Author    avroAuthor `avro:"author"`
	CreatedAt int64      `avro:"created_at"`
	Verdict   *string    `avro:"verdict"`
}

type avroAuthor struct {
	Name      string `avro:"name"`
	Followers int32  `avro:"followers"`
}

type avroVerdict struct {
	PostID  int64  `avro:"post_id"`
	Verdict string `avro:"verdict"`
}

// wireRecord is v under schema id in Confluent's wire format.
func wireRecord(t *testing.T, schema avro.Schema, id int, v any) []byte {
	t.Helper()
	body, err := avro.Marshal(schema, v)
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), body...)
}

// TestRunAvroWithRegistry: `streamer run` on Avro posts and verdicts in
// Confluent's wire format, their schemas from a registry that asks for a
// password and is down at first, predictions written in Avro too, with
// review routing and explanations. No schema registry server is packaged
// for this machine: the registry's REST calls are served by franz-go's
// srfake, an in-process httptest server of Confluent's API. kcat cannot
// encode Avro without a registry of its own to reach, so the test
// produces the records with kafka-go.
func TestRunAvroWithRegistry(t *testing.T) {
	reg := srfake.New(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("moderation:hunter2"))))
	defer reg.Close()
	const postID, verdictID = 21, 22
	reg.SeedSchema("examples-value", 1, postID, sr.Schema{Schema: postAvroSchema, Type: sr.TypeAvro})
	reg.SeedSchema("labels-value", 1, verdictID, sr.Schema{Schema: verdictAvroSchema, Type: sr.TypeAvro})
	var down atomic.Bool
	down.Store(true)
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if down.Load() && r.Method == http.MethodGet {
			http.Error(w, `{"error_code": 50003, "message": "registry restarting"}`, http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	t.Setenv("STREAMER_SCHEMA_REGISTRY_PASSWORD", "hunter2")
	sets := append([]string{"input.format=avro", "output.format=avro", "schema_registry.url=" + reg.URL(),
		"schema_registry.username=moderation", "input.examples.id=/post_id",
		"review.thresholds=spam=1", "predictions.explain=2"}, moderationSets...)
	r := startRun(t, sets...)

	postSchema, verdictSchema := avro.MustParse(postAvroSchema), avro.MustParse(verdictAvroSchema)
	want := map[string]bool{}
	posts := func(from, to, labelEvery int) (examples, labels []kafka.Message) {
		for i := from; i < to; i++ {
			words := []string{"cheap pills buy now", "lovely walk in the park", "win a prize today", "our meeting notes"}[i%4]
			p := avroPost{PostID: int64(2000 + i), Body: fmt.Sprintf("%s %d", words, i), Author: avroAuthor{Name: "a", Followers: int32(i % 7)}, CreatedAt: int64(1764331200 + i)}
			examples = append(examples, kafka.Message{Key: fmt.Appendf(nil, "p-%d", i), Value: wireRecord(t, postSchema, postID, p)})
			want[fmt.Sprint(2000+i)] = true
			if labelEvery > 0 && i%labelEvery == 0 {
				labels = append(labels, kafka.Message{Value: wireRecord(t, verdictSchema, verdictID, avroVerdict{PostID: int64(2000 + i), Verdict: []string{"spam", "ham"}[i%2]})})
			}
		}
		return examples, labels
	}
	const n, later = 60, 20
	examples, labels := posts(0, n, 3)
	good := wireRecord(t, postSchema, postID, avroPost{PostID: 1, Body: "x"})
	bad := map[string]string{
		`{"post_id": 1, "body": "JSON, not Avro"}`:                                 "not_wire_format",
		string(append(binary.BigEndian.AppendUint32([]byte{0}, 999), good[5:]...)): "unknown_schema",
		string(good[:len(good)-3]):                                                 "malformed_avro",
	}
	for v := range bad {
		examples = append(examples, kafka.Message{Key: []byte("bad"), Value: []byte(v)})
	}
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	write := func(topic string, msgs []kafka.Message) {
		w := &kafka.Writer{Addr: kafka.TCP(r.broker), Topic: topic, Transport: tr, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
		defer w.Close()
		r.within("the "+topic+" to be written", time.Minute, func() bool { return w.WriteMessages(context.Background(), msgs...) == nil })
	}
	write("examples", examples)
	write("labels", labels)

	// The registry is down: the records wait, /readyz and the metrics say
	// so, and nothing is predicted or dead-lettered.
	r.within("the wait for the registry to show", time.Minute, func() bool {
		return r.metric("streamer_schema_registry_waiting") == 1 && strings.Contains(r.get("/readyz"), "waiting for the schema registry")
	})
	if got := r.metric("streamer_predictions_published_total"); got != 0 {
		t.Fatalf("%v predictions while the registry is down", got)
	}
	down.Store(false)
	r.within("every post predicted", time.Minute, func() bool {
		return r.metric("streamer_predictions_published_total") >= n && r.metric("streamer_schema_registry_waiting") == 0
	})
	r.within("the dead letters", time.Minute, func() bool { return deadLetters(r) >= len(bad) })

	// Posts that a model predicts: spam ones are routed to review, and
	// every one is explained.
	r.within("a model", time.Minute, func() bool { return httpStatus("http://"+r.http+"/readyz") == http.StatusOK })
	examples, _ = posts(n, n+later, 0)
	write("examples", examples)
	r.within("a prediction routed to review", time.Minute, func() bool { return r.metric("streamer_predictions_reviewed_total") > 0 })

	// The predictions are Avro under the schema registered for them; read
	// before the run stops, since its broker stops with it.
	registered, ok := reg.GetSchema("predictions-value", 1)
	if !ok || registered.Schema.Schema == "" {
		t.Fatal("no schema under predictions-value")
	}
	decode := func(m kafka.Message) avroPrediction {
		return decodePrediction(t, registered, m)
	}
	got := map[string]avroPrediction{}
	readTopic(t, r.broker, "predictions", func(m kafka.Message) { got[string(m.Key)] = decode(m) }, n+later)
	for id := range want {
		if _, ok := got[id]; !ok {
			t.Fatalf("no prediction for %s (of %d)", id, len(got))
		}
	}
	routed := 0
	for id, p := range got {
		if p.Label == nil {
			continue
		}
		if wantReview := *p.Label == "spam" && *p.Prob < 1; p.Review != wantReview {
			t.Errorf("prediction %s: %s at %v, review %v", id, *p.Label, *p.Prob, p.Review)
		}
		if e := p.Explanation; e == nil || e.Class != *p.Label || len(e.Terms) == 0 || len(e.Terms) > 2 || !p.named() {
			t.Errorf("prediction %s of %s: explanation %+v, want 1 or 2 named terms for its class", id, *p.Label, e)
		}
		if p.Review {
			routed++
		}
	}
	readTopic(t, r.broker, "review", func(m kafka.Message) {
		if p := decode(m); !p.Review || !got[p.ID].Review {
			t.Errorf("review record %s: %+v is not a routed prediction", m.Key, p)
		}
	}, routed)
	reasons := map[string]string{}
	readTopic(t, r.broker, "examples-dlq", func(m kafka.Message) {
		for _, h := range m.Headers {
			if h.Key == "dlq-reason" {
				reasons[string(m.Value)] = string(h.Value)
			}
		}
	}, len(bad))
	for v, reason := range bad {
		if reasons[v] != reason {
			t.Errorf("dead letter %.40q: reason %q, want %q", v, reasons[v], reason)
		}
	}

	// A backfill to a topic of its own is Avro too, under the schema
	// registered for that topic, routed and explained as the service's.
	args := []string{"replay", "--from", "0", "--retrain", "--out-topic", "backfill", "--set", "kafka.brokers=" + r.broker}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	if out, err := runErr(args...); err != nil {
		t.Fatalf("streamer replay: %v\n%s", err, out)
	}
	backfill, ok := reg.GetSchema("backfill-value", 1)
	if !ok {
		t.Fatal("no schema under backfill-value")
	}
	explained := 0
	readTopic(t, r.broker, "backfill", func(m kafka.Message) {
		if p := decodePrediction(t, backfill, m); p.named() {
			explained++
		}
	}, n+later)
	if explained == 0 {
		t.Error("no backfilled prediction is explained with named terms")
	}
	r.stop()
	if strings.Contains(r.logs.String(), "hunter2") {
		t.Fatal("the registry's password is in the logs")
	}
}

// named reports whether p is explained by a term that names the words
// hashed to it.
func (p avroPrediction) named() bool {
	return p.Explanation != nil && slices.ContainsFunc(p.Explanation.Terms, func(t avroTerm) bool { return len(t.Names) > 0 })
}

// decodePrediction decodes an Avro prediction record written under the
// schema registered as s, keyed by the prediction's id.
func decodePrediction(t *testing.T, s sr.SubjectSchema, m kafka.Message) avroPrediction {
	t.Helper()
	if m.Value[0] != 0 || int(binary.BigEndian.Uint32(m.Value[1:5])) != s.ID {
		t.Fatalf("prediction %q: header % x, want the registered id %d", m.Key, m.Value[:5], s.ID)
	}
	var p avroPrediction
	if err := avro.Unmarshal(avro.MustParse(s.Schema.Schema), m.Value[5:], &p); err != nil || p.ID != string(m.Key) {
		t.Fatalf("prediction %q: %+v, %v", m.Key, p, err)
	}
	return p
}

// avroPrediction is a prediction as a consumer decodes it from Avro.
type avroPrediction struct {
	ID          string   `avro:"id"`
	Label       *string  `avro:"label"`
	Prob        *float64 `avro:"prob"`
	Review      bool     `avro:"review"`
	Explanation *struct {
		Class string     `avro:"class"`
		Terms []avroTerm `avro:"terms"`
	} `avro:"explanation"`
}

type avroTerm struct {
	Names []string `avro:"names"`
}

// deadLetters returns the examples dead-lettered so far, by the metrics.
func deadLetters(r *streamerRun) int {
	total := 0
	for _, line := range strings.Split(r.get("/metrics"), "\n") {
		if strings.HasPrefix(line, `streamer_dead_letters_total{reason=`) && strings.Contains(line, `topic="examples"`) {
			var x float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &x)
			total += int(x)
		}
	}
	return total
}

// readTopic reads at least n records of partition 0 of topic from its
// start, and calls fn with each.
func readTopic(t *testing.T, broker, topic string, fn func(kafka.Message), n int) {
	t.Helper()
	rd := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{broker}, Topic: topic, MaxWait: 50 * time.Millisecond})
	defer rd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		m, err := rd.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("%s: read %d of %d records: %v", topic, i, n, err)
		}
		fn(m)
	}
}
