package replay

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"streamer/brokers"
)

// Bound is one end of a replay range: an offset, a time, or the end of the
// partition.
type Bound struct {
	Offset int64
	Time   time.Time
	End    bool
	isTime bool
}

// ParseBound reads an offset ("1200"), an RFC 3339 time, or, when end is
// allowed, "end".
func ParseBound(s string, endAllowed bool) (Bound, error) {
	if s == "end" && endAllowed {
		return Bound{End: true}, nil
	}
	if off, err := strconv.ParseInt(s, 10, 64); err == nil {
		if off < 0 {
			return Bound{}, fmt.Errorf("offset %d is negative", off)
		}
		return Bound{Offset: off}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		want := "an offset or an RFC 3339 time"
		if endAllowed {
			want += ", or end"
		}
		return Bound{}, fmt.Errorf("%q is not %s", s, want)
	}
	return Bound{Time: t, isTime: true}, nil
}

// PartitionRange is the half-open offset range [From, To) of a partition.
type PartitionRange struct {
	Partition int
	From, To  int64
}

// Resolve turns the bounds into offsets for each partition of topic: times
// through the broker's offset-for-time lookup, offsets clamped to what the
// partition holds, "end" to the partition's end when the replay starts.
func Resolve(ctx context.Context, conn *brokers.Connection, topic string, partitions []int, from, to Bound) ([]PartitionRange, error) {
	ranges, err := conn.Offsets(ctx, topic, partitions)
	if err != nil {
		return nil, err
	}
	lo, err := resolveBound(ctx, conn, topic, partitions, from, ranges)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	hi, err := resolveBound(ctx, conn, topic, partitions, to, ranges)
	if err != nil {
		return nil, fmt.Errorf("--to: %w", err)
	}
	out := make([]PartitionRange, 0, len(partitions))
	for _, p := range partitions {
		out = append(out, PartitionRange{Partition: p, From: lo[p], To: max(lo[p], hi[p])})
	}
	return out, nil
}

func resolveBound(ctx context.Context, conn *brokers.Connection, topic string, partitions []int, b Bound, ranges map[int]brokers.OffsetRange) (map[int]int64, error) {
	out := map[int]int64{}
	var byTime map[int]int64
	if b.isTime {
		var err error
		if byTime, err = conn.OffsetsForTime(ctx, topic, partitions, b.Time.UnixMilli()); err != nil {
			return nil, err
		}
	}
	for _, p := range partitions {
		r := ranges[p]
		switch {
		case b.End:
			out[p] = r.End
		case b.isTime && byTime[p] < 0:
			out[p] = r.End // no record at or after the time
		case b.isTime:
			out[p] = byTime[p]
		default:
			out[p] = b.Offset
		}
		out[p] = min(max(out[p], r.First), r.End)
	}
	return out, nil
}
