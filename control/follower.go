package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/snapshot"
)

// Follower keeps the last order of one model on the control topic. Call
// CatchUp once, then run Follow on a goroutine of the caller's; Current
// and Changed may be called from any goroutine.
type Follower struct {
	conn  *brokers.Connection
	topic string
	model string
	log   *slog.Logger

	next    int64 // the offset to read next; owned by CatchUp, then Follow
	mu      sync.Mutex
	pin     Pin
	changed chan struct{}
}

// NewFollower returns a follower of model's orders on topic; log receives
// the records it cannot read (nil discards them).
func NewFollower(conn *brokers.Connection, topic, model string, log *slog.Logger) *Follower {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Follower{conn: conn, topic: topic, model: model, log: log, pin: Pin{Model: model}, changed: make(chan struct{}, 1)}
}

// Current returns the pinned snapshot, and whether the model is pinned.
func (f *Follower) Current() (pinned snapshot.Selector, ok bool) {
	p := f.Pin()
	return p.Selector(), p.Pinned
}

// Pin returns the model's last order; the zero order (unpinned) before any.
func (f *Follower) Pin() Pin {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pin
}

// Changed receives a value after the order changes (several changes may
// come as one): read Current then.
func (f *Follower) Changed() <-chan struct{} { return f.changed }

// CatchUp reads the topic from its start to its end as it is now, so that
// Current is the model's last order when it returns. A topic that does
// not exist yet holds no order.
func (f *Follower) CatchUp(ctx context.Context) error {
	ranges, err := f.conn.Offsets(ctx, f.topic, []int{0})
	if errors.Is(err, kafka.UnknownTopicOrPartition) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control topic: %w", err)
	}
	r := ranges[0]
	err = f.conn.ReadRange(ctx, f.topic, 0, max(r.First, f.next), r.End, func(m kafka.Message) error {
		f.take(m)
		return nil
	})
	if err != nil {
		return fmt.Errorf("control topic: %w", err)
	}
	f.next = max(f.next, r.End)
	return nil
}

// Follow reads the orders written after CatchUp until ctx ends, and
// returns nil then. A reader that fails is created again after backoff,
// from where the last one stopped.
func (f *Follower) Follow(ctx context.Context, backoff time.Duration) error {
	for {
		err := f.follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		f.log.Warn("control topic reader failed; reading again", "topic", f.topic, "offset", f.next, "error", err, "backoff", backoff.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
	}
}

func (f *Follower) follow(ctx context.Context) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: f.conn.Addrs, Dialer: f.conn.Dialer, Topic: f.topic, Partition: 0,
		MinBytes: 1, MaxBytes: 1 << 20, MaxWait: brokers.FetchMaxWait,
	})
	defer brokers.CloseWithin(r, 5*time.Second)
	if err := r.SetOffset(f.next); err != nil {
		return fmt.Errorf("read %s from %d: %w", f.topic, f.next, err)
	}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("read %s: %w", f.topic, err)
		}
		f.take(m)
		f.next = m.Offset + 1
	}
}

// take applies one record of the topic: the orders of other models and
// records that cannot be read are passed over.
func (f *Follower) take(m kafka.Message) {
	if string(m.Key) != f.model {
		return
	}
	p, err := ParseRecord(m.Key, m.Value)
	if err != nil {
		f.log.Error("control record refused", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "error", err)
		return
	}
	f.mu.Lock()
	same := p.Pinned == f.pin.Pinned && p.Selector() == f.pin.Selector()
	f.pin = p
	f.mu.Unlock()
	if !same {
		select {
		case f.changed <- struct{}{}:
		default:
		}
	}
}
