package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/online/active"
	"streamer/pipeline"
)

// The learner's label requests (active.*) are chosen on the solver's
// goroutine, after each solve and at each of its ticks, from the pool the
// newest solve left (or, before any model, from the window as it is), and
// written to kafka.topics.label_requests keyed by example id. A request
// that cannot be written is not sent again: its example is never
// requested twice, and the budget it spent is lost.

// requests reports whether this process makes label requests.
func (s *Service) requests() bool {
	b, err := active.ParseBudget(s.cfg.Active.Budget) // validated at load
	return err == nil && !b.Zero() && s.learns()
}

// requestsTopic is the topic of label requests, with as many partitions
// as the examples'.
func (s *Service) requestsTopic() brokers.Topic {
	return brokers.Topic{Name: s.cfg.Kafka.Topics.LabelRequests, Partitions: s.cfg.Kafka.Partitions}
}

// publishRequests writes the label requests the budget allows now and
// returns once they are acknowledged; it logs a write that failed.
func (s *Service) publishRequests(ctx context.Context, w *kafka.Writer) {
	reqs := s.pipe.Requests(time.Now())
	if len(reqs) == 0 {
		return
	}
	msgs, err := requestRecords(s.cfg.Kafka.Topics.LabelRequests, reqs)
	if err == nil {
		err = w.WriteMessages(ctx, msgs...)
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("label requests not written; their examples are not requested again", "topic", s.cfg.Kafka.Topics.LabelRequests,
			"requests", len(reqs), "error", err)
	}
}

// requestRecords returns the records of reqs, keyed by example id.
func requestRecords(topic string, reqs []pipeline.LabelRequest) ([]kafka.Message, error) {
	msgs := make([]kafka.Message, len(reqs))
	for i := range reqs {
		data, err := json.Marshal(&reqs[i])
		if err != nil {
			return nil, fmt.Errorf("encode label request %q: %w", reqs[i].ID, err)
		}
		msgs[i] = kafka.Message{Topic: topic, Key: []byte(reqs[i].ID), Value: data}
	}
	return msgs, nil
}

// registerRequestMetrics registers the counts of label requests and their
// answers, by strategy, read from the pipeline when scraped.
func registerRequestMetrics(reg prometheus.Registerer, pipe *pipeline.Pipeline) {
	counts := []struct {
		name, help string
		read       func(active.Stats) map[string]uint64
	}{
		{"streamer_label_requests_sent_total", "Label requests written, by strategy: informative (the model's margin weighted by the kNN graph), cover (before any model: the graph alone) or random (active.random_share).",
			func(st active.Stats) map[string]uint64 { return st.Sent }},
		{"streamer_label_requests_answered_total", "Label requests answered by a label, in time or not, by strategy.",
			func(st active.Stats) map[string]uint64 { return st.Answered }},
		{"streamer_label_requests_answered_in_time_total", "Label requests answered before they expired (active.expiry), by strategy.",
			func(st active.Stats) map[string]uint64 { return st.InTime }},
		{"streamer_label_requests_expired_total", "Label requests that expired before their answer, by strategy.",
			func(st active.Stats) map[string]uint64 { return st.Expired }},
	}
	for _, strategy := range []string{active.StrategyInformative, active.StrategyCover, active.StrategyRandom} {
		labels := prometheus.Labels{"strategy": strategy}
		for _, c := range counts {
			read := c.read
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help, ConstLabels: labels},
				func() float64 { st, _ := pipe.RequestStats(); return float64(read(st)[strategy]) }))
		}
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "streamer_label_requests_accuracy_ratio",
			Help:        "Fraction of the answered label requests whose prediction, by the model that chose them, was the answer, by strategy; random's is an unbiased estimate of the model's accuracy on the window, the others' are not (chosen for being hard). NaN until an answer meets a prediction: requests chosen before any model carry none.",
			ConstLabels: labels,
		}, func() float64 {
			st, _ := pipe.RequestStats()
			return ratio(st.Right[strategy], st.Scored[strategy])
		}))
	}
}
