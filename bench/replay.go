package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/ingest"
	"streamer/online/linalg"
	"streamer/online/train"
	"streamer/pipeline"
	"streamer/replay"
	"streamer/snapshot"
	"streamer/synth"
	"streamer/vector"
)

// ReplayConfig describes `streamer bench replay`.
type ReplayConfig struct {
	Examples   int // generated text examples on the embedded broker
	Partitions int
	Retrain    bool // retrain instead of scoring with a pinned model
	Seed       uint64
}

// ReplayReport is what `streamer bench replay` prints.
type ReplayReport struct {
	Examples         int     `json:"examples"`
	Partitions       int     `json:"partitions"`
	Mode             string  `json:"mode"`
	ProduceSeconds   float64 `json:"produce_seconds"`
	Seconds          float64 `json:"seconds"`
	RecordsPerSecond float64 `json:"records_per_second"`
	Accuracy         float64 `json:"accuracy"`
}

// discard is a replay Output that counts.
type discard struct{ n int64 }

func (d *discard) Write(context.Context, *pipeline.Prediction) error { d.n++; return nil }
func (d *discard) Close(context.Context) error                       { return nil }

// Replay produces cfg.Examples generated examples to an embedded broker and
// measures a replay of all of them, with a model trained on the first
// thousands pinned (or retraining).
func Replay(ctx context.Context, cfg ReplayConfig) (ReplayReport, error) {
	rep := ReplayReport{Examples: cfg.Examples, Partitions: max(cfg.Partitions, 1), Mode: "pinned"}
	if cfg.Retrain {
		rep.Mode = "retrain"
	}
	cluster, err := embedded.Start(embedded.Config{Partitions: rep.Partitions})
	if err != nil {
		return rep, err
	}
	defer cluster.Close()
	sc, err := config.Load("", nil)
	if err != nil {
		return rep, err
	}
	conn, err := sc.Brokers().Connect(cluster.Addrs())
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	start := time.Now()
	train, err := produceBench(ctx, conn, cfg)
	if err != nil {
		return rep, err
	}
	rep.ProduceSeconds = time.Since(start).Seconds()
	pc, err := sc.Pipeline()
	if err != nil {
		return rep, err
	}
	rc := replay.Config{
		Topics:   replay.Topics{Examples: "examples", Labels: "labels", ExamplesDLQ: "examples-dlq", LabelsDLQ: "labels-dlq"},
		To:       replay.Bound{End: true},
		Retrain:  cfg.Retrain,
		Pipeline: pc,
		Out:      &discard{},
	}
	if !cfg.Retrain {
		if rc.Snapshot, err = benchModel(ctx, train, pc.Decoder); err != nil {
			return rep, err
		}
	}
	sum, err := replay.Run(ctx, conn, rc)
	if err != nil {
		return rep, err
	}
	rep.Seconds, rep.RecordsPerSecond = sum.Seconds, sum.RecordsPerSecond
	if sum.Accuracy != nil {
		rep.Accuracy = *sum.Accuracy
	}
	return rep, nil
}

// produceBench writes the examples (a tenth carrying their label) and
// returns the first few thousand as training data.
func produceBench(ctx context.Context, conn *brokers.Connection, cfg ReplayConfig) ([]synth.Document, error) {
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "examples",
		Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond,
		BatchSize: 5000, BatchBytes: 16 << 20, AllowAutoTopicCreation: true}
	defer w.Close()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: cfg.Seed})
	var train []synth.Document
	batch := make([]kafka.Message, 0, 5000)
	for i := range cfg.Examples {
		d := gen.Next()
		rec := map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text}
		if i%10 == 0 {
			rec["label"] = d.Label
		}
		v, _ := json.Marshal(rec)
		batch = append(batch, kafka.Message{Key: []byte(d.ID), Value: v})
		if len(train) < 5000 {
			train = append(train, d)
		}
		if len(batch) == cap(batch) || i == cfg.Examples-1 {
			if err := w.WriteMessages(ctx, batch...); err != nil {
				return nil, fmt.Errorf("produce: %w", err)
			}
			batch = batch[:0]
		}
	}
	return train, nil
}

// benchModel trains the pinned model of the benchmark.
func benchModel(ctx context.Context, docs []synth.Document, dec ingest.Decoder) (*snapshot.Snapshot, error) {
	vecs := make([]vector.Vector, len(docs))
	labels := make([]string, len(docs))
	for i, d := range docs {
		vecs[i], labels[i] = dec.Featurizer.Text(d.Text), d.Label
	}
	x := linalg.NewMatrix(vecs, dec.Featurizer.Dim)
	m, _, err := train.Solve(ctx, train.Window{X: x, Labels: labels}, train.Params{Algorithm: train.SVM}, nil)
	if err != nil {
		return nil, err
	}
	return &snapshot.Snapshot{Name: "bench", Version: 1, Model: *m, Features: snapshot.Features{Dim: dec.Featurizer.Dim}}, nil
}
