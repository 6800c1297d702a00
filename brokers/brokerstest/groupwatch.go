package brokerstest

import (
	"context"
	"fmt"
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
	client   *kafka.Client
	group    string
	interval time.Duration

	mu         sync.Mutex
	state      string
	members    int
	rebalances int
}

// WatchGroup returns a watch of group through client (a
// brokers.Connection's) that polls every interval (25ms when 0).
func WatchGroup(client *kafka.Client, group string, interval time.Duration) *GroupWatch {
	if interval <= 0 {
		interval = 25 * time.Millisecond
	}
	return &GroupWatch{client: client, group: group, interval: interval}
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
		state, members, err := DescribeGroup(ctx, w.client, w.group)
		if err != nil {
			continue
		}
		w.mu.Lock()
		if w.state == "Stable" && state != "Stable" {
			w.rebalances++
		}
		w.state, w.members = state, len(members)
		w.mu.Unlock()
	}
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

// GroupState returns the state of group (Stable, PreparingRebalance, ...)
// and its members' ids, asking the broker at addr with a client of its
// own.
func GroupState(ctx context.Context, addr, group string) (string, []string, error) {
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections() // its metadata refresh would outlive the cluster
	return DescribeGroup(ctx, &kafka.Client{Addr: kafka.TCP(addr), Timeout: 5 * time.Second, Transport: tr}, group)
}

// DescribeGroup returns the state of group (Stable, PreparingRebalance,
// ...) and its members' ids, as client's brokers report them.
func DescribeGroup(ctx context.Context, client *kafka.Client, group string) (string, []string, error) {
	resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		return "", nil, fmt.Errorf("describe group %s: %w", group, err)
	}
	for _, g := range resp.Groups {
		if g.GroupID != group {
			continue
		}
		if g.Error != nil {
			return "", nil, fmt.Errorf("describe group %s: %w", group, g.Error)
		}
		var ids []string
		for _, m := range g.Members {
			ids = append(ids, m.MemberID)
		}
		return g.GroupState, ids, nil
	}
	return "", nil, fmt.Errorf("describe group %s: not in the answer", group)
}
