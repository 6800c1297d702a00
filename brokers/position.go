package brokers

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Position is where a consumer group stands in one partition, as the
// brokers see it: the partition's offset range and the group's committed
// offset (-1 when the group never committed there).
type Position struct {
	Partition int
	First     int64 // first offset still on the partition
	End       int64 // high watermark: the offset after the last record
	Committed int64
}

// Positions returns the group's position in every partition of topic, in
// partition order, from the brokers' high watermarks and the group's
// committed offsets, never from a reader's own statistics. A topic that
// does not exist yet has no positions.
func (c *Connection) Positions(ctx context.Context, group, topic string) ([]Position, error) {
	parts, err := c.Partitions(ctx, topic)
	if errors.Is(err, ErrUnknownTopic) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(parts)
	ranges, err := c.Offsets(ctx, topic, parts)
	if err != nil {
		return nil, err
	}
	committed, err := c.CommittedOffsets(ctx, group, topic, parts)
	if err != nil {
		return nil, err
	}
	out := make([]Position, 0, len(parts))
	for _, p := range parts {
		r, ok := ranges[p]
		if !ok {
			return nil, fmt.Errorf("list offsets of %s[%d]: no answer", topic, p)
		}
		pos := Position{Partition: p, First: r.First, End: r.End, Committed: -1}
		if off, ok := committed[p]; ok {
			pos.Committed = off
		}
		out = append(out, pos)
	}
	return out, nil
}
