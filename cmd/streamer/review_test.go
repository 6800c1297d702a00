package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"streamer/pipeline"
	"streamer/synth"
)

// TestRunRoutesReviewsAndExplains runs `streamer run` on the embedded
// broker, with every spam prediction below probability 1 routed to
// review and predictions explained by 3 terms, and drives it with kcat: a
// routed prediction is on the predictions topic and, the same record, on
// the review topic; POST /v1/predict?explain=true answers terms that add
// up, with the bias and the rest, to the score.
func TestRunRoutesReviewsAndExplains(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the service on the embedded broker")
	}
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat is not installed (make test installs it)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs logBuffer
	cmd := newRootCommand()
	cmd.SetOut(io.Discard)
	cmd.SetErr(&logs)
	cmd.SetArgs([]string{"run", "--set", "kafka.brokers=embedded", "--set", "http.listen=127.0.0.1:0", "--set", "kafka.partitions=1",
		"--set", "review.thresholds=spam=1", "--set", "predictions.explain=3"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	within := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			select {
			case err := <-done:
				t.Fatalf("streamer run returned (%v) while waiting for %s\n%s", err, what, logs.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var started, listening map[string]any
	within("the service to consume", func() bool {
		_, consuming := logs.event("consuming")
		started, _ = logs.event("embedded Kafka cluster started")
		listening, _ = logs.event("http")
		return consuming && started != nil && listening != nil
	})
	broker := started["addrs"].([]any)[0].(string)
	base := "http://" + listening["listen"].(string)

	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 7, Topics: 2})
	produce := func(n int, labelEvery int) {
		var examples, labels bytes.Buffer
		for i := range n {
			d := gen.Next()
			v, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
			fmt.Fprintf(&examples, "%s\t%s\n", d.ID, v)
			if labelEvery > 0 && i%labelEvery == 0 {
				l, _ := json.Marshal(map[string]string{"id": d.ID, "label": d.Label})
				fmt.Fprintf(&labels, "%s\t%s\n", d.ID, l)
			}
		}
		runKcat(t, ctx, examples.Bytes(), "-P", "-b", broker, "-t", "examples", "-K", "\t")
		if labels.Len() > 0 {
			runKcat(t, ctx, labels.Bytes(), "-P", "-b", broker, "-t", "labels", "-K", "\t")
		}
	}
	produce(200, 4)
	within("a model", func() bool { return httpStatus(base+"/readyz") == http.StatusOK })
	produce(50, 0)
	within("a prediction routed to review", func() bool {
		return strings.Contains(httpBody(base+"/metrics"), "streamer_predictions_reviewed_total") &&
			!strings.Contains(httpBody(base+"/metrics"), "streamer_predictions_reviewed_total 0\n")
	})

	reviews := kcatRecords(t, ctx, broker, "review")
	predictions := kcatRecords(t, ctx, broker, "predictions")
	if len(reviews) == 0 {
		t.Fatal("no record on the review topic")
	}
	for id, value := range reviews {
		var p pipeline.Prediction
		if err := json.Unmarshal([]byte(value), &p); err != nil {
			t.Fatalf("review %s: %v", id, err)
		}
		if !p.Review || *p.Label != "spam" || p.Explanation == nil || len(p.Explanation.Terms) != 3 {
			t.Fatalf("review record %s", value)
		}
		if predictions[id] != value {
			t.Fatalf("review of %s is %s; on the predictions topic %q", id, value, predictions[id])
		}
	}

	body := fmt.Sprintf(`{"id": "asked", "text": %q}`, gen.Next().Text)
	resp, err := http.Post(base+"/v1/predict?explain=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p pipeline.Prediction
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || p.Explanation == nil {
		t.Fatalf("POST /v1/predict?explain=true: %d, %v, %+v", resp.StatusCode, err, p)
	}
	e := p.Explanation
	sum := e.Bias + e.Rest
	for _, term := range e.Terms {
		sum += term.Contribution
	}
	if len(e.Terms) != 5 || math.Abs(sum-e.Score) > 1e-9 || e.Score != p.Scores[*p.Label] {
		t.Fatalf("explanation of %s: %d terms, bias + terms + rest %v, score %v, prediction's %v", *p.Label, len(e.Terms), sum, e.Score, p.Scores[*p.Label])
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("streamer run: %v\n%s", err, logs.String())
	}
}

// runKcat runs kcat, the librdkafka command line client.
func runKcat(t *testing.T, ctx context.Context, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// kcatRecords returns the values of a topic's records by key, read with kcat
// from the beginning to the end.
func kcatRecords(t *testing.T, ctx context.Context, broker, topic string) map[string]string {
	t.Helper()
	out := runKcat(t, ctx, nil, "-C", "-b", broker, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k\t%s\n")
	records := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if key, value, ok := strings.Cut(line, "\t"); ok {
			records[key] = value
		}
	}
	return records
}

func httpStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func httpBody(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
