package brokers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// GroupWatch follows a consumer group's state as the coordinator reports
// it, and counts the group's rebalances: the times it leaves the Stable
// state. It polls, so a rebalance shorter than the polling interval can be
// missed. Run polls until its context ends; StableWith and Rebalances may
// be called from any goroutine meanwhile.
type GroupWatch struct {
	conn     *Connection
	group    string
	interval time.Duration

	mu         sync.Mutex
	state      string
	members    int
	rebalances int
}

// WatchGroup returns a watch of group that polls every interval (25ms when
// 0).
func (c *Connection) WatchGroup(group string, interval time.Duration) *GroupWatch {
	if interval <= 0 {
		interval = 25 * time.Millisecond
	}
	return &GroupWatch{conn: c, group: group, interval: interval}
}

// Run polls the group's state until ctx ends. A poll that fails is passed
// over.
func (w *GroupWatch) Run(ctx context.Context) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		state, members, err := w.describe(ctx)
		if err != nil {
			continue
		}
		w.mu.Lock()
		if w.state == "Stable" && state != "Stable" {
			w.rebalances++
		}
		w.state, w.members = state, members
		w.mu.Unlock()
	}
}

func (w *GroupWatch) describe(ctx context.Context) (state string, members int, err error) {
	resp, err := w.conn.Client().DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{w.group}})
	if err != nil {
		return "", 0, fmt.Errorf("describe group %s: %w", w.group, err)
	}
	for _, g := range resp.Groups {
		if g.GroupID != w.group {
			continue
		}
		if g.Error != nil {
			return "", 0, fmt.Errorf("describe group %s: %w", w.group, g.Error)
		}
		return g.GroupState, len(g.Members), nil
	}
	return "", 0, fmt.Errorf("describe group %s: not in the answer", w.group)
}

// StableWith reports whether the group was last seen stable with n
// members.
func (w *GroupWatch) StableWith(n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state == "Stable" && w.members == n
}

// Rebalances returns the number of rebalances seen so far.
func (w *GroupWatch) Rebalances() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rebalances
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
func (c *Connection) LongestPause(ctx context.Context, topic string, since time.Time, keyOf func(kafka.Message) (int, error)) (Pause, error) {
	parts, err := c.Partitions(ctx, topic)
	if err != nil {
		return Pause{}, err
	}
	ranges, err := c.Offsets(ctx, topic, parts)
	if err != nil {
		return Pause{}, err
	}
	from := map[int]int64{}
	if since.After(time.Unix(0, 0)) {
		if from, err = c.OffsetsForTime(ctx, topic, parts, since.UnixMilli()); err != nil {
			return Pause{}, err
		}
	}
	times := map[int][]time.Time{}
	for _, p := range parts {
		first, ok := ranges[p].First, true
		if off, asked := from[p]; asked {
			first, ok = max(first, off), off >= 0 // -1: nothing that late
		}
		if !ok {
			continue
		}
		err := c.ReadRange(ctx, topic, p, first, ranges[p].End, func(m kafka.Message) error {
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
	var longest Pause
	for key, ts := range times {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(ts); i++ {
			if d := ts[i].Sub(ts[i-1]); d > longest.Duration {
				longest = Pause{Duration: d, Key: key, After: ts[i-1]}
			}
		}
	}
	return longest, nil
}
