package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/snapshot"
)

// Pin is the order of a model's control record: while Pinned, every
// process scores with Version of Epoch, whatever newer versions are
// learned; when not, each puts the newest model in force.
type Pin struct {
	Model   string `json:"model"`
	Pinned  bool   `json:"pinned"`
	Version uint64 `json:"version,omitempty"`
	// Epoch is the epoch of the pinned version. Orders written before
	// epochs were named have none: they pin Version under any epoch
	// (Selector).
	Epoch *uint64   `json:"epoch,omitempty"`
	At    time.Time `json:"at"`
}

// PinStamp returns the order to pin model to the snapshot of stamp st.
func PinStamp(model string, st snapshot.Stamp) Pin {
	epoch := st.Epoch
	return Pin{Model: model, Pinned: true, Version: st.Version, Epoch: &epoch, At: time.Now().UTC()}
}

// Selector names the pinned snapshot: the version of the epoch ordered,
// or of any epoch when the order names none.
func (p Pin) Selector() snapshot.Selector {
	if p.Epoch == nil {
		return snapshot.AnyEpochVersion(p.Version)
	}
	return snapshot.Exactly(snapshot.Stamp{Epoch: *p.Epoch, Version: p.Version})
}

// Topic is the control topic as EnsureTopics creates it: one partition,
// so that one reader sees every order in order, compacted by model.
func Topic(name string) brokers.Topic {
	return brokers.Topic{Name: name, Partitions: 1, Compacted: true}
}

// Record returns the control record of p, keyed by its model.
func Record(p Pin) (kafka.Message, error) {
	if p.Model == "" {
		return kafka.Message{}, errors.New("control record: no model name")
	}
	if p.Pinned && p.Version == 0 {
		return kafka.Message{}, fmt.Errorf("pin model %q: versions start at 1", p.Model)
	}
	value, err := json.Marshal(p)
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encode control record of %q: %w", p.Model, err)
	}
	return kafka.Message{Key: []byte(p.Model), Value: value}, nil
}

// ParseRecord reads a control record. A tombstone (no value) unpins.
func ParseRecord(key, value []byte) (Pin, error) {
	if len(value) == 0 {
		return Pin{Model: string(key)}, nil
	}
	var p Pin
	if err := json.Unmarshal(value, &p); err != nil {
		return Pin{}, fmt.Errorf("control record %q: %w", key, err)
	}
	if p.Model != string(key) {
		return Pin{}, fmt.Errorf("control record %q names model %q", key, p.Model)
	}
	if p.Pinned && p.Version == 0 {
		return Pin{}, fmt.Errorf("control record %q pins version 0", key)
	}
	return p, nil
}

// Write creates the control topic when it is missing and writes p to it,
// acknowledged by every in-sync replica.
func Write(ctx context.Context, conn *brokers.Connection, topic string, p Pin) error {
	msg, err := Record(p)
	if err != nil {
		return err
	}
	if err := conn.EnsureTopics(ctx, Topic(topic)); err != nil {
		return err
	}
	w := &kafka.Writer{
		Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: topic,
		Balancer:     kafka.BalancerFunc(func(kafka.Message, ...int) int { return 0 }),
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: 1, MaxAttempts: 5,
	}
	defer brokers.CloseWithin(w, 5*time.Second)
	// A topic just created may not be in the metadata the transport
	// cached yet: kafka-go then answers that it does not exist.
	for attempt := 0; ; attempt++ {
		err = w.WriteMessages(ctx, msg)
		if err == nil || !errors.Is(err, kafka.UnknownTopicOrPartition) || attempt == 20 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("write control record of %q to %s: %w", p.Model, topic, err)
	}
	return nil
}
