package brokers

import (
	"context"
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
// its partitions are never read again, silently (issue 11). Kafka's own
// coordinator starts every member's session when its join completes; the
// keeper does the same from outside: a member of a stable group that has
// sent nothing naming it (join, sync, heartbeat, commit) for its group's
// session timeout is made to leave.
type sessionKeeper struct {
	c      *kfake.Cluster
	client *kafka.Client
	log    *slog.Logger

	mu      sync.Mutex
	session map[string]time.Duration        // group → longest session timeout its members asked for
	seen    map[string]map[string]time.Time // group → member → last request naming it
}

func newSessionKeeper(c *kfake.Cluster, client *kafka.Client, log *slog.Logger) *sessionKeeper {
	k := &sessionKeeper{c: c, client: client, log: log, session: map[string]time.Duration{}, seen: map[string]map[string]time.Time{}}
	c.Control(k.observe)
	return k
}

// observe notes the members the request names; it never answers it. It
// runs on the cluster's goroutine.
func (k *sessionKeeper) observe(req kmsg.Request) (kmsg.Response, error, bool) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		k.touch(r.Group, r.MemberID, time.Duration(r.SessionTimeoutMillis)*time.Millisecond)
	case *kmsg.SyncGroupRequest:
		k.touch(r.Group, r.MemberID, 0)
	case *kmsg.HeartbeatRequest:
		k.touch(r.Group, r.MemberID, 0)
	case *kmsg.OffsetCommitRequest:
		k.touch(r.Group, r.MemberID, 0)
	}
	return nil, nil, false
}

func (k *sessionKeeper) touch(group, member string, session time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if session > k.session[group] {
		k.session[group] = session
	}
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
		for group, member := range k.expired(time.Now()) {
			k.expire(ctx, group, member)
		}
	}
}

// expired returns the members, one per group at most, whose sessions are
// over: members of stable groups silent for the session timeout. A member
// first seen here (its first join names no member id) starts its session
// now.
func (k *sessionKeeper) expired(now time.Time) map[string]string {
	k.mu.Lock()
	groups := make(map[string]time.Duration, len(k.session))
	for g, s := range k.session {
		groups[g] = s
	}
	k.mu.Unlock()
	out := map[string]string{}
	for group, session := range groups {
		info := k.c.GroupInfo(group)
		if info == nil || session <= 0 {
			continue
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
			case info.State == "Stable" && now.Sub(last) > session:
				out[group] = m.MemberID
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

// expire makes member leave group, as its session timer would have.
func (k *sessionKeeper) expire(ctx context.Context, group, member string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := k.client.LeaveGroup(ctx, &kafka.LeaveGroupRequest{GroupID: group, Members: []kafka.LeaveGroupRequestMember{{ID: member}}})
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
		k.log.Warn("embedded cluster: ending a silent member's session failed", "group", group, "member", member, "error", err)
		return
	}
	k.log.Warn("embedded cluster: a member sent nothing for its session timeout; it left the group", "group", group, "member", member)
	k.mu.Lock()
	delete(k.seen[group], member)
	k.mu.Unlock()
}
