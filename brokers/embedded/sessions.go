package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionKeeper ends the sessions of classic group members that the
// embedded cluster forgets to time out.
//
// kfake arms a member's session timer when the member's JoinGroup answer
// is delivered, or when it heartbeats. A process killed while its
// JoinGroup waits for a rebalance never gets the answer: when the send
// loses the race with the closed connection (about one time in two), the
// member has no timer at all. If the live leader then assigns it
// partitions and the group becomes stable, nothing ever removes it, and
// its partitions are never read again, silently. Kafka's own
// coordinator starts every member's session when its join completes; the
// keeper does the same from outside: a member of a stable group that has
// sent nothing naming it (join, sync, heartbeat, commit) for its group's
// session timeout is made to leave. While the group rebalances, a live
// member may wait in its join for up to the rebalance timeout, so the
// keeper waits for the longer of the two; kfake would wait for each dead
// member in turn (its rebalance timer starts again at every change), and
// a dead leader costs one more rebalance timeout.
type sessionKeeper struct {
	c      *kfake.Cluster
	client *kafka.Client
	log    *slog.Logger

	last map[string]string // group → its state, members and generation at the last check, for debug logs

	mu      sync.Mutex
	session map[string]time.Duration        // group → longest session timeout its members asked for
	rejoin  map[string]time.Duration        // group → longest rebalance timeout its members asked for
	seen    map[string]map[string]time.Time // group → member → last request naming it
}

func newSessionKeeper(c *kfake.Cluster, client *kafka.Client, log *slog.Logger) *sessionKeeper {
	k := &sessionKeeper{c: c, client: client, log: log, last: map[string]string{}, session: map[string]time.Duration{}, rejoin: map[string]time.Duration{}, seen: map[string]map[string]time.Time{}}
	c.Control(k.observe)
	return k
}

// observe notes the members the request names; it never answers it. It
// runs on the cluster's goroutine.
func (k *sessionKeeper) observe(req kmsg.Request) (kmsg.Response, error, bool) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		k.touch(r.Group, r.MemberID, time.Duration(r.SessionTimeoutMillis)*time.Millisecond,
			time.Duration(r.RebalanceTimeoutMillis)*time.Millisecond)
	case *kmsg.SyncGroupRequest:
		k.touch(r.Group, r.MemberID, 0, 0)
	case *kmsg.HeartbeatRequest:
		k.touch(r.Group, r.MemberID, 0, 0)
	case *kmsg.OffsetCommitRequest:
		k.touch(r.Group, r.MemberID, 0, 0)
	}
	return nil, nil, false
}

func (k *sessionKeeper) touch(group, member string, session, rebalance time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.session[group] = max(k.session[group], session)
	k.rejoin[group] = max(k.rejoin[group], rebalance)
	if member == "" {
		return
	}
	if k.seen[group] == nil {
		k.seen[group] = map[string]time.Time{}
	}
	k.seen[group][member] = time.Now()
}

// run checks the groups every interval until ctx ends.
func (k *sessionKeeper) run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for group, members := range k.expired(time.Now()) {
			k.expire(ctx, group, members)
		}
	}
}

// expired returns, per group, the members whose sessions are over:
// silent for the session timeout in a stable group, for the longer of the
// session and rebalance timeouts in a rebalancing one. A member first seen
// here (its first join names no member id) starts its session now.
func (k *sessionKeeper) expired(now time.Time) map[string][]string {
	k.mu.Lock()
	groups := make(map[string]time.Duration, len(k.session))
	for g, s := range k.session {
		groups[g] = s
	}
	rejoin := make(map[string]time.Duration, len(k.rejoin))
	for g, r := range k.rejoin {
		rejoin[g] = r
	}
	k.mu.Unlock()
	out := map[string][]string{}
	for group, session := range groups {
		info := k.c.GroupInfo(group)
		if info == nil || session <= 0 {
			continue
		}
		k.debug(info)
		silence := session
		if info.State != "Stable" {
			silence = max(session, rejoin[group])
		}
		k.mu.Lock()
		seen := k.seen[group]
		if seen == nil {
			seen = map[string]time.Time{}
			k.seen[group] = seen
		}
		live := map[string]bool{}
		for _, m := range info.Members {
			live[m.MemberID] = true
			last, ok := seen[m.MemberID]
			switch {
			case !ok:
				seen[m.MemberID] = now
			case now.Sub(last) > silence && (info.State == "Stable" || info.State == "PreparingRebalance" || info.State == "CompletingRebalance"):
				out[group] = append(out[group], m.MemberID)
			}
		}
		for m := range seen {
			if !live[m] {
				delete(seen, m)
			}
		}
		k.mu.Unlock()
	}
	return out
}

// expire makes members leave group, as their session timers would have.
func (k *sessionKeeper) expire(ctx context.Context, group string, members []string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := &kafka.LeaveGroupRequest{GroupID: group}
	for _, m := range members {
		req.Members = append(req.Members, kafka.LeaveGroupRequestMember{ID: m})
	}
	resp, err := k.client.LeaveGroup(ctx, req)
	if err == nil {
		err = resp.Error
	}
	if err == nil {
		for _, m := range resp.Members {
			if m.Error != nil {
				err = m.Error
			}
		}
	}
	if err != nil {
		k.log.Warn("embedded cluster: ending silent members' sessions failed", "group", group, "members", members, "error", err)
		return
	}
	k.log.Warn("embedded cluster: members sent nothing for their session timeout; they left the group", "group", group, "members", members)
	k.mu.Lock()
	for _, m := range members {
		delete(k.seen[group], m)
	}
	k.mu.Unlock()
}

// debug logs a group's state, generation and members when they change.
func (k *sessionKeeper) debug(info *kfake.GroupInfo) {
	if !k.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	ids := make([]string, len(info.Members))
	for i, m := range info.Members {
		ids[i] = fmt.Sprintf("%s%v", m.MemberID, m.Assignment)
	}
	now := fmt.Sprint(info.State, info.Epoch, ids)
	if k.last[info.Group] == now {
		return
	}
	k.last[info.Group] = now
	k.log.Debug("embedded cluster: group", "group", info.Group, "state", info.State, "generation", info.Epoch, "members", ids)
}
