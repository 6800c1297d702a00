package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
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
	needKcat(t)
	r := startRun(t, "review.thresholds=spam=1", "predictions.explain=3")
	broker := r.broker

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
		kcat(t, examples.Bytes(), "-P", "-b", broker, "-t", "examples", "-K", "\t")
		if labels.Len() > 0 {
			kcat(t, labels.Bytes(), "-P", "-b", broker, "-t", "labels", "-K", "\t")
		}
	}
	produce(200, 4)
	r.within("a model", time.Minute, func() bool { return httpStatus("http://"+r.http+"/readyz") == http.StatusOK })
	produce(50, 0)
	r.within("a prediction routed to review", time.Minute, func() bool { return r.metric("streamer_predictions_reviewed_total") > 0 })

	reviews := kcatRecords(t, broker, "review")
	predictions := kcatRecords(t, broker, "predictions")
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
	resp, err := http.Post("http://"+r.http+"/v1/predict?explain=true", "application/json", strings.NewReader(body))
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

	r.stop()
}

// kcatRecords returns the values of a topic's records by key, read with kcat
// from the beginning to the end.
func kcatRecords(t *testing.T, broker, topic string) map[string]string {
	t.Helper()
	out := kcat(t, nil, "-C", "-b", broker, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k\t%s\n")
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
