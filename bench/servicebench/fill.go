package servicebench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/ingest"
	"streamer/synth"
)

// drainText is one example's text or vector and, when the source has one,
// its label.
type drainText struct {
	id, text, label string
	vector          []float64
}

// value returns the example's record value.
func (d drainText) value() []byte {
	if d.vector != nil {
		v, _ := json.Marshal(map[string]any{"id": d.id, "vector": d.vector})
		return v
	}
	v, _ := json.Marshal(map[string]string{"id": d.id, "text": d.text})
	return v
}

// drainTexts returns a function giving the i-th example: generated text,
// or the examples (text or vector) of a JSONL file cycled, each cycle's
// ids made distinct.
func drainTexts(path string) (func(i int) drainText, error) {
	if path == "" {
		gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 1})
		return func(int) drainText {
			d := gen.Next()
			return drainText{id: d.ID, text: d.Text, label: d.Label}
		}, nil
	}
	f, err := ingest.OpenDecompressed(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []drainText
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var r struct {
			ID     string          `json:"id"`
			Text   string          `json:"text"`
			Vector []float64       `json:"vector"`
			Label  json.RawMessage `json:"label"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if r.Text == "" && r.Vector == nil {
			continue
		}
		if r.ID == "" {
			r.ID = "line-" + strconv.Itoa(line)
		}
		label := string(r.Label)
		if s, err := strconv.Unquote(label); err == nil {
			label = s
		} else if label == "null" {
			label = ""
		}
		recs = append(recs, drainText{id: r.ID, text: r.Text, vector: r.Vector, label: label})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no record with a text or a vector", path)
	}
	return func(i int) drainText {
		r := recs[i%len(recs)]
		if c := i / len(recs); c > 0 {
			r.id += "~" + strconv.Itoa(c)
		}
		return r
	}, nil
}

// fillDrain writes the examples, and the labels of a LabelRate fraction of
// them spread evenly, and returns once the brokers acknowledged them all.
func fillDrain(ctx context.Context, conn *brokers.Connection, cfg DrainConfig, examples, labels string) error {
	next, err := drainTexts(cfg.TextFrom)
	if err != nil {
		return err
	}
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: 5000, BatchBytes: 900 << 10}
	defer w.Close()
	batch := make([]kafka.Message, 0, 5500)
	for i := range cfg.Examples {
		d := next(i)
		batch = append(batch, kafka.Message{Topic: examples, Key: []byte(d.id), Value: d.value()})
		// Exactly ⌊n·rate⌋ of the first n examples are labeled.
		if d.label != "" && math.Floor(float64(i+1)*cfg.LabelRate) > math.Floor(float64(i)*cfg.LabelRate) {
			l, _ := json.Marshal(map[string]string{"id": d.id, "label": d.label})
			batch = append(batch, kafka.Message{Topic: labels, Key: []byte(d.id), Value: l})
		}
		if len(batch) >= 5000 || i == cfg.Examples-1 {
			if err := w.WriteMessages(ctx, batch...); err != nil {
				return fmt.Errorf("fill %s: %w", examples, err)
			}
			batch = batch[:0]
		}
	}
	return nil
}
