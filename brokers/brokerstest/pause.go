package brokerstest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"
)

// TopicReader reads the partitions of a topic as LongestPause needs:
// *brokers.Connection is one. brokerstest names no type of brokers, whose
// own tests import it.
type TopicReader interface {
	Client() *kafka.Client
	Partitions(ctx context.Context, topic string) ([]int, error)
	OffsetsForTime(ctx context.Context, topic string, partitions []int, unixMillis int64) (map[int]int64, error)
	ReadRange(ctx context.Context, topic string, partition int, from, to int64, fn func(kafka.Message) error) error
}

// Pause is the longest time a stream of records went without one: between
// the records at After and After+Duration of Key.
type Pause struct {
	Duration time.Duration
	Key      int
	After    time.Time
}

// LongestPause reads topic from its start to its end and returns the
// longest time, by the records' broker timestamps, between two consecutive
// records of one key, keyOf's (for predictions, the input partition they
// come from), over the records written at or after since. An error of
// keyOf ends the read.
func LongestPause(ctx context.Context, r TopicReader, topic string, since time.Time, keyOf func(kafka.Message) (int, error)) (Pause, error) {
	parts, err := r.Partitions(ctx, topic)
	if err != nil {
		return Pause{}, err
	}
	ends, err := endOffsets(ctx, r.Client(), topic, parts)
	if err != nil {
		return Pause{}, err
	}
	// The first record at or after since, or the first of all: a record's
	// time is never before the Unix epoch.
	from, err := r.OffsetsForTime(ctx, topic, parts, max(since.UnixMilli(), 0))
	if err != nil {
		return Pause{}, err
	}
	times := map[int][]time.Time{}
	for _, p := range parts {
		first, ok := from[p]
		if !ok {
			return Pause{}, fmt.Errorf("longest pause on %s: no offset for %v in partition %d", topic, since, p)
		}
		if first < 0 { // nothing that late
			continue
		}
		err := r.ReadRange(ctx, topic, p, first, ends[p], func(m kafka.Message) error {
			if m.Time.Before(since) {
				return nil
			}
			key, err := keyOf(m)
			if err != nil {
				return err
			}
			times[key] = append(times[key], m.Time)
			return nil
		})
		if err != nil {
			return Pause{}, fmt.Errorf("longest pause on %s: %w", topic, err)
		}
	}
	return longest(times), nil
}

// longest returns the longest pause between two consecutive times of one
// key; the times of a key may come in any order.
func longest(times map[int][]time.Time) Pause {
	var out Pause
	for key, ts := range times {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(ts); i++ {
			if d := ts[i].Sub(ts[i-1]); d > out.Duration {
				out = Pause{Duration: d, Key: key, After: ts[i-1]}
			}
		}
	}
	return out
}

// endOffsets returns the offset after the last record of each partition.
func endOffsets(ctx context.Context, client *kafka.Client, topic string, partitions []int) (map[int]int64, error) {
	reqs := make([]kafka.OffsetRequest, len(partitions))
	for i, p := range partitions {
		reqs[i] = kafka.LastOffsetOf(p)
	}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	out := make(map[int]int64, len(partitions))
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("end offsets of %s[%d]: %w", topic, po.Partition, po.Error)
		}
		out[po.Partition] = po.LastOffset
	}
	return out, nil
}
