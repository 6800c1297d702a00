package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/pipeline"
	"streamer/service"
	"streamer/synth"
)

// Config describes a demo run. Zero fields mean the defaults beside them.
type Config struct {
	// Data is a JSONL (or .jsonl.gz) file of labeled examples in the
	// example schema; empty generates a two-class text stream.
	Data string
	// Examples is the number of generated examples; 0 means 6000.
	Examples int
	// LabelRate is the fraction of examples whose label is revealed; 0
	// means 0.05.
	LabelRate float64
	// LabelDelay is how many examples later a label is revealed; 0 means
	// 100.
	LabelDelay int
	// Rate is the examples produced per second; 0 means 400.
	Rate float64
	// Timeout bounds the whole run; 0 means 50s.
	Timeout time.Duration
	Seed    uint64
	// Service is the configuration of the service; its brokers are
	// replaced by the demo's embedded cluster.
	Service config.Config
}

func (c Config) withDefaults() Config {
	if c.Examples <= 0 {
		c.Examples = 6000
	}
	if c.LabelRate <= 0 {
		c.LabelRate = 0.05
	}
	if c.LabelDelay <= 0 {
		c.LabelDelay = 100
	}
	if c.Rate <= 0 {
		c.Rate = 400
	}
	if c.Timeout <= 0 {
		c.Timeout = 50 * time.Second
	}
	return c
}

// ServiceOverrides sizes the service for a demo that ends in well under a
// minute: configuration keys to apply before the user's own.
func ServiceOverrides() []string {
	return []string{
		"http.listen=127.0.0.1:0",
		"window.max_examples=2000",
		"schedule.solve_examples=250",
		"schedule.solve_labels=10",
		"schedule.solve_interval=2s",
		"snapshot.every_solves=3",
		"eval.baseline=true",
		"kafka.partitions=2",
	}
}

// Report is the demo's summary.
type Report struct {
	Examples    int `json:"examples"`
	Labels      int `json:"labels"`
	Predictions int `json:"predictions"`
	// Accuracy is the prequential accuracy on the revealed labels: each
	// label scores the prediction made when its example arrived.
	Accuracy float64 `json:"accuracy"`
	// SupervisedAccuracy is the same for the learner that ignores the
	// unlabeled examples, on the same labels.
	SupervisedAccuracy float64 `json:"supervised_accuracy"`
	// Scored counts the revealed labels that scored a prediction: those of
	// examples predicted before any model score none, and with none scored
	// Accuracy and SupervisedAccuracy are 0.
	Scored int `json:"labels_scored"`
	// Agreement is the fraction of the examples with a true label (all of
	// a generated stream's; those of --data that carry one) whose
	// prediction matches it, labels revealed or not.
	Agreement       float64 `json:"agreement"`
	ExamplesLabeled int     `json:"examples_labeled"`
	Solves          int64   `json:"solves"`
	Snapshots       int64   `json:"snapshots"`
	ModelVersion    uint64  `json:"model_version"`
	Seconds         float64 `json:"seconds"`
}

// Run runs the demo.
func Run(ctx context.Context, cfg Config, log *slog.Logger) (Report, error) {
	cfg = cfg.withDefaults()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cluster, err := embedded.Start(embedded.Config{Partitions: cfg.Service.Kafka.Partitions})
	if err != nil {
		return Report{}, err
	}
	defer cluster.Close()
	scfg := cfg.Service
	scfg.Kafka.Brokers = cluster.Addrs()
	svc, err := service.New(scfg, log)
	if err != nil {
		return Report{}, err
	}
	// The service runs until the predictions are in, and is stopped and
	// waited for on every return, before the cluster closes.
	svcCtx, stopService := context.WithCancel(ctx)
	var (
		running sync.WaitGroup
		svcErr  error
	)
	running.Go(func() { svcErr = svc.Run(svcCtx) })
	defer func() {
		stopService()
		running.Wait()
	}()

	conn, err := scfg.Brokers().Connect(cluster.Addrs())
	if err != nil {
		return Report{}, err
	}
	defer conn.Close()
	truth, labels, err := produce(ctx, conn, cfg)
	if err != nil {
		return Report{}, err
	}
	preds, agree, err := collect(ctx, conn, scfg.Kafka.Topics.Predictions, truth)
	if err != nil {
		return Report{}, err
	}
	stopService()
	running.Wait()
	if svcErr != nil {
		return Report{}, fmt.Errorf("service: %w", svcErr)
	}
	st := svc.Status()
	agreement, labeled := agreementOf(agree, truth)
	return Report{
		Examples: len(truth), Labels: labels, Predictions: preds,
		Accuracy: st.Pipeline.SSL.Accuracy(), SupervisedAccuracy: st.Pipeline.Baseline.Accuracy(),
		Scored: st.Pipeline.SSL.Total, Agreement: agreement, ExamplesLabeled: labeled,
		Solves: st.Pipeline.Solves, Snapshots: st.Snapshots,
		ModelVersion: st.Pipeline.ModelVersion, Seconds: time.Since(start).Seconds(),
	}, nil
}

// produce writes the stream at cfg.Rate examples a second, each revealed
// label cfg.LabelDelay examples after its example. It returns every
// example's true label and the number of labels revealed.
func produce(ctx context.Context, conn *brokers.Connection, cfg Config) (map[string]string, int, error) {
	src, err := openSource(cfg)
	if err != nil {
		return nil, 0, err
	}
	defer src.close()
	t := cfg.Service.Kafka.Topics
	w := &kafka.Writer{
		Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 2 * time.Millisecond, AllowAutoTopicCreation: true,
	}
	defer w.Close()
	r := rand.New(rand.NewPCG(cfg.Seed, 17))
	truth := map[string]string{}
	var revealed []dueLabel // labels to reveal, in order
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	perTick := max(1, int(cfg.Rate/20))
	n, labels := 0, 0
	for done := false; !done; {
		var msgs []kafka.Message
		for range perTick {
			rec, ok, err := src.next()
			if err != nil {
				return nil, 0, err
			}
			if !ok || n >= cfg.limit() {
				done = true
				break
			}
			truth[rec.id] = rec.label
			msgs = append(msgs, kafka.Message{Topic: t.Examples, Key: []byte(rec.id), Value: rec.value})
			if rec.label != "" && r.Float64() < cfg.LabelRate {
				revealed = append(revealed, dueLabel{at: n + cfg.LabelDelay, msg: labelMessage(t.Labels, rec)})
			}
			n++
		}
		var due int
		msgs, revealed, due = releaseLabels(msgs, revealed, n, done)
		labels += due
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			return nil, 0, fmt.Errorf("produce: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-tick.C:
		}
	}
	return truth, labels, nil
}

// limit is the number of examples to produce.
func (c Config) limit() int {
	if c.Data != "" {
		return int(^uint(0) >> 1)
	}
	return c.Examples
}

func openSource(cfg Config) (source, error) {
	if cfg.Data != "" {
		return openFile(cfg.Data)
	}
	return &generated{s: synth.NewTextStream(synth.TextStreamConfig{Seed: cfg.Seed}), left: cfg.Examples}, nil
}

// dueLabel is a label record to produce once `at` examples were produced.
type dueLabel struct {
	at  int
	msg kafka.Message
}

// labelMessage is the label record of rec.
func labelMessage(topic string, rec record) kafka.Message {
	v, _ := json.Marshal(map[string]string{"id": rec.id, "label": rec.label})
	return kafka.Message{Topic: topic, Key: []byte(rec.id), Value: v}
}

// releaseLabels appends to msgs the labels due once produced examples were
// produced (all of them at the end), and returns the rest and how many it
// released.
func releaseLabels(msgs []kafka.Message, pending []dueLabel, produced int, end bool) ([]kafka.Message, []dueLabel, int) {
	k := 0
	for k < len(pending) && (end || pending[k].at <= produced) {
		msgs = append(msgs, pending[k].msg)
		k++
	}
	return msgs, pending[k:], k
}

// agreementOf returns the fraction of the examples with a true label that
// agree of them matched, and their number.
func agreementOf(agree int, truth map[string]string) (float64, int) {
	labeled := 0
	for _, y := range truth {
		if y != "" {
			labeled++
		}
	}
	if labeled == 0 {
		return 0, 0
	}
	return float64(agree) / float64(labeled), labeled
}

// collect reads the predictions topic until every example has a
// prediction; it returns the number of predictions read and the number of
// examples whose first prediction matches their true label.
func collect(ctx context.Context, conn *brokers.Connection, topic string, truth map[string]string) (int, int, error) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: conn.Addrs, Dialer: conn.Dialer, GroupID: fmt.Sprintf("demo-%d", time.Now().UnixNano()),
		Topic: topic, StartOffset: kafka.FirstOffset, MaxWait: brokers.FetchMaxWait,
	})
	defer r.Close()
	seen := map[string]bool{}
	read, agree := 0, 0
	for len(seen) < len(truth) {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return read, 0, fmt.Errorf("only %d of %d examples have a prediction: %w", len(seen), len(truth), err)
			}
			return read, 0, fmt.Errorf("read predictions: %w", err)
		}
		read++
		var p pipeline.Prediction
		if err := json.Unmarshal(m.Value, &p); err != nil {
			return read, 0, fmt.Errorf("prediction %q: %w", m.Key, err)
		}
		if y := truth[p.ID]; !seen[p.ID] && y != "" && p.Label != nil && *p.Label == y {
			agree++
		}
		seen[p.ID] = true
	}
	return read, agree, nil
}
