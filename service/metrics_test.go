package service

import (
	"context"
	"fmt"
	"maps"
	"math"
	"testing"

	"github.com/segmentio/kafka-go"

	"streamer/pipeline"
)

// gauge returns the value of the unlabeled metric name in s's registry.
func gauge(t *testing.T, s *Service, name string) float64 {
	t.Helper()
	families, err := s.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		m := f.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// handleAll decodes msgs and hands them to the pipeline in order, as the
// consumer does, which refuses what does not decode.
func handleAll(s *Service, msgs ...kafka.Message) {
	for _, m := range msgs {
		src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
		switch m.Topic {
		case s.cfg.Kafka.Topics.Examples:
			ex, err := s.pipe.DecodeExample(m.Value, m.Time)
			if err == nil {
				_, err = s.pipe.Example(ex, src)
			}
			if err != nil {
				s.pipe.ExampleRefused(src)
			}
		case s.cfg.Kafka.Topics.Labels:
			l, err := s.pipe.DecodeLabel(m.Value)
			if err != nil {
				s.pipe.LabelRefused(src)
				continue
			}
			s.pipe.Label(l, src)
		}
	}
}

func TestLabelsJoinedCountsEarlyAndLateLabels(t *testing.T) {
	t.Parallel()
	s, err := New(testConfig(t, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	example := func(id string) kafka.Message {
		return kafka.Message{Topic: "examples", Value: fmt.Appendf(nil, `{"id": %q, "text": "cheap pills now"}`, id)}
	}
	label := func(id string) kafka.Message {
		return kafka.Message{Topic: "labels", Value: fmt.Appendf(nil, `{"id": %q, "label": "spam"}`, id)}
	}
	handleAll(s,
		label("early"), example("early"), // the label waits for its example
		example("late"), label("late"), // the label finds its example
		label("never"), // no example: not joined
	)
	if got := gauge(t, s, "streamer_labels_joined_total"); got != 2 {
		t.Fatalf("streamer_labels_joined_total %v, want 2 (one early, one late)", got)
	}
	if got := gauge(t, s, "streamer_window_examples"); got != 2 {
		t.Fatalf("streamer_window_examples %v, want 2", got)
	}
}

// TestLabelsDroppedCountsPendingEvictions: a label pushed out of the
// pending ones for room before its example came is counted as dropped;
// the ones that still wait, or joined, are not.
func TestLabelsDroppedCountsPendingEvictions(t *testing.T) {
	t.Parallel()
	s, err := New(testConfig(t, nil, "join.pending_labels=2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	handleAll(s,
		kafka.Message{Topic: "labels", Value: []byte(`{"id": "a", "label": "spam"}`)},
		kafka.Message{Topic: "labels", Value: []byte(`{"id": "b", "label": "ham"}`)},
		kafka.Message{Topic: "examples", Value: []byte(`{"id": "b", "text": "see you at noon"}`)}, // b joins
		kafka.Message{Topic: "labels", Value: []byte(`{"id": "c", "label": "spam"}`)},
		kafka.Message{Topic: "labels", Value: []byte(`{"id": "d", "label": "spam"}`)}, // a is dropped for room
	)
	if got := gauge(t, s, "streamer_labels_dropped_total"); got != 1 {
		t.Fatalf("streamer_labels_dropped_total %v, want 1 (a)", got)
	}
	if got := gauge(t, s, "streamer_labels_joined_total"); got != 1 {
		t.Fatalf("streamer_labels_joined_total %v, want 1 (b)", got)
	}
}

// TestWindowTooOldCountsLateExamples: under window.max_age an example more
// than the age before the newest seen is scored but not kept, and counted.
func TestWindowTooOldCountsLateExamples(t *testing.T) {
	t.Parallel()
	s, err := New(testConfig(t, nil, "window.max_age=1h"), nil)
	if err != nil {
		t.Fatal(err)
	}
	example := func(id, ts string) kafka.Message {
		return kafka.Message{Topic: "examples", Value: fmt.Appendf(nil, `{"id": %q, "ts": %q, "text": "cheap pills now"}`, id, ts)}
	}
	handleAll(s,
		example("new", "2026-01-01T12:00:00Z"),
		example("within", "2026-01-01T11:30:00Z"),
		example("late", "2026-01-01T10:00:00Z"),
	)
	if got := gauge(t, s, "streamer_window_too_old_total"); got != 1 {
		t.Fatalf("streamer_window_too_old_total %v, want 1", got)
	}
	if got := gauge(t, s, "streamer_window_examples"); got != 2 {
		t.Fatalf("streamer_window_examples %v, want 2", got)
	}
}

// TestReviewThresholdsAreGauges: with review routing, each class of the
// model that scores has its threshold as streamer_review_threshold{class}:
// the fixed one, or +Inf while nothing was graded for the target; none
// before any model.
func TestReviewThresholdsAreGauges(t *testing.T) {
	t.Parallel()
	s, err := New(testConfig(t, nil, "review.thresholds=spam=0.8", "review.target_precision=0.95"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := labeledGauges(t, s, "streamer_review_threshold", "class"); len(got) != 0 {
		t.Fatalf("thresholds %v before any model, want none", got)
	}
	for i := range 20 {
		class, text := "spam", "cheap pills now"
		if i%2 == 1 {
			class, text = "ham", "lunch at noon"
		}
		handleAll(s, kafka.Message{Topic: "examples", Offset: int64(i), Value: fmt.Appendf(nil, `{"id": "e%d", "label": %q, "text": %q}`, i, class, text)})
	}
	if _, err := s.pipe.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := labeledGauges(t, s, "streamer_review_threshold", "class")
	if want := map[string]float64{"spam": 0.8, "ham": math.Inf(1)}; !maps.Equal(got, want) {
		t.Fatalf("thresholds %v, want %v", got, want)
	}
}

// labeledGauges returns the gauges of metric name by the value of their
// label.
func labeledGauges(t *testing.T, s *Service, name, label string) map[string]float64 {
	t.Helper()
	families, err := s.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// TestAccuracyGaugesAreNaNUntilScored: the accuracy gauges read NaN, not
// 0, until a label meets a prediction of a model (before the first model,
// and on a scorer, which reads no labels), so that an alert on a low
// accuracy (deploy/prometheus/alerts.yaml) does not fire for want of
// labels; then the share right.
func TestAccuracyGaugesAreNaNUntilScored(t *testing.T) {
	t.Parallel()
	s, err := New(testConfig(t, nil, "active.budget=10%"), nil)
	if err != nil {
		t.Fatal(err)
	}
	nan := func(when string) {
		t.Helper()
		if got := gauge(t, s, "streamer_prequential_accuracy_ratio"); !math.IsNaN(got) {
			t.Errorf("%s: streamer_prequential_accuracy_ratio %v, want NaN", when, got)
		}
		for strategy, got := range labeledGauges(t, s, "streamer_label_requests_accuracy_ratio", "strategy") {
			if !math.IsNaN(got) {
				t.Errorf("%s: streamer_label_requests_accuracy_ratio{strategy=%q} %v, want NaN", when, strategy, got)
			}
		}
	}
	nan("at the start")
	message := func(i int, label bool) kafka.Message {
		class, text := "spam", "cheap pills now"
		if i%2 == 1 {
			class, text = "ham", "lunch at noon"
		}
		if label {
			return kafka.Message{Topic: "labels", Offset: int64(i), Value: fmt.Appendf(nil, `{"id": "e%d", "label": %q}`, i, class)}
		}
		return kafka.Message{Topic: "examples", Offset: int64(i), Value: fmt.Appendf(nil, `{"id": "e%d", "text": %q}`, i, text)}
	}
	for i := range 20 {
		handleAll(s, message(i, false), message(i, true))
	}
	nan("labels of examples predicted before any model")
	if _, err := s.pipe.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 24; i++ {
		handleAll(s, message(i, false), message(i, true))
	}
	if got := gauge(t, s, "streamer_prequential_accuracy_ratio"); got != 1 {
		t.Fatalf("streamer_prequential_accuracy_ratio %v after four labels of right predictions, want 1", got)
	}
}
