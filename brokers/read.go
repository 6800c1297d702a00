package brokers

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
)

// ReadRange reads the records of offsets [from, to) of one partition, in
// order, with a reader of its own (no consumer group, no commits), and calls
// fn on each. It stops at the first error, its own or fn's.
func (c *Connection) ReadRange(ctx context.Context, topic string, partition int, from, to int64, fn func(kafka.Message) error) error {
	if to <= from {
		return nil
	}
	// The range is on the brokers already: a fetch waits only at its end,
	// past the last record, and Close waits for that fetch; a long wait
	// there would cost every partition read in turn (a restore reads each
	// input partition).
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.Addrs, Dialer: c.Dialer, Topic: topic, Partition: partition,
		MinBytes: 1, MaxBytes: 16 << 20, MaxWait: rangeMaxWait, QueueCapacity: 4096,
	})
	defer CloseWithin(r, 5*time.Second)
	if err := r.SetOffset(from); err != nil {
		return fmt.Errorf("read %s[%d] from %d: %w", topic, partition, from, err)
	}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("read %s[%d]: %w", topic, partition, err)
		}
		if m.Offset >= to {
			return nil
		}
		if err := fn(m); err != nil {
			return err
		}
		if m.Offset+1 >= to {
			return nil
		}
	}
}

// rangeMaxWait is how long a fetch of ReadRange waits for records.
const rangeMaxWait = 100 * time.Millisecond

// CloseWithin closes c, and leaves it behind if Close does not return within
// d: kafka-go's Reader.Close can hang on a broker that went away.
func CloseWithin(c interface{ Close() error }, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("close did not finish within %v; left behind", d)
	}
}
