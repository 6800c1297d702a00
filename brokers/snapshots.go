package brokers

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go"

	"streamer/snapshot"
)

// ReadSnapshots reads the snapshot topic from its start to its current end
// and returns the newest complete snapshot of model name; ok is false when
// there is none. Records that cannot be used are counted in skipped.
func (conn *Connection) ReadSnapshots(ctx context.Context, topic, name string) (c snapshot.Complete, ok bool, skipped int, err error) {
	asm := snapshot.NewAssembler()
	if skipped, err = conn.scanSnapshots(ctx, topic, asm); err != nil {
		return c, false, skipped, err
	}
	c, ok = asm.Latest(name)
	return c, ok, skipped, nil
}

// ReadSnapshotVersion returns the encoded snapshot of model name at
// version from the snapshot topic; of learners' epochs that made that
// version, the newest.
func (conn *Connection) ReadSnapshotVersion(ctx context.Context, topic, name string, version uint64) ([]byte, error) {
	var found []byte
	var epoch uint64
	asm := snapshot.NewAssembler()
	asm.OnComplete = func(n string, c snapshot.Complete) {
		if n == name && c.Version == version && (found == nil || c.Epoch >= epoch) {
			found, epoch = c.Data, c.Epoch
		}
	}
	if _, err := conn.scanSnapshots(ctx, topic, asm); err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: model %q version %d is not on topic %s (compaction keeps the newest two)", ErrNoSnapshot, name, version, topic)
	}
	return found, nil
}

// scanSnapshots feeds every record of the snapshot topic, up to its end
// when the scan starts, to asm.
func (conn *Connection) scanSnapshots(ctx context.Context, topic string, asm *snapshot.Assembler) (skipped int, err error) {
	ranges, err := conn.Offsets(ctx, topic, []int{0})
	if err != nil {
		return 0, err
	}
	r := ranges[0]
	if r.End <= r.First {
		return 0, nil
	}
	err = conn.ReadRange(ctx, topic, 0, r.First, r.End, func(m kafka.Message) error {
		rec := snapshot.Record{Key: string(m.Key), Value: m.Value, Headers: map[string]string{}}
		for _, h := range m.Headers {
			rec.Headers[h.Key] = string(h.Value)
		}
		if asm.Add(rec) != nil {
			skipped++
		}
		return nil
	})
	if err != nil {
		return skipped, fmt.Errorf("read snapshots: %w", err)
	}
	return skipped, nil
}

// ErrNoSnapshot says that no snapshot of the model was found.
var ErrNoSnapshot = errors.New("no snapshot")
