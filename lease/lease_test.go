package lease

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
)

// cluster starts an embedded broker with the lease topic and returns a
// Config for it.
func cluster(t *testing.T) (Config, *kafka.Client) {
	t.Helper()
	c, err := embedded.Start(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	conn, err := (brokers.Config{Brokers: c.Addrs()}).Connect(c.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.EnsureTopics(ctx, brokers.Topic{Name: "lease", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	return Config{
		Brokers: c.Addrs(), Group: "learners", Topic: "lease",
		SessionTimeout: 6 * time.Second, RebalanceTimeout: 6 * time.Second,
		HeartbeatInterval: 200 * time.Millisecond, JoinBackoff: 100 * time.Millisecond,
	}, conn.Client()
}

// campaign runs Campaign in a goroutine owned by the test; the channel
// gets the term once it holds the lease.
func campaign(t *testing.T, ctx context.Context, cfg Config) <-chan *Term {
	out := make(chan *Term, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		term, err := Campaign(ctx, cfg)
		if err != nil {
			return
		}
		out <- term
	}()
	t.Cleanup(func() {
		<-done
		select {
		case term := <-out:
			term.Close()
		default:
		}
	})
	return out
}

// members waits until the lease group is stable with n members.
func members(t *testing.T, ctx context.Context, client *kafka.Client, n int) {
	t.Helper()
	err := poll(ctx, 30*time.Second, func() bool {
		resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{"learners"}})
		if err != nil || len(resp.Groups) != 1 {
			return false
		}
		g := resp.Groups[0]
		return g.GroupState == "Stable" && len(g.Members) == n
	})
	if err != nil {
		t.Fatalf("the lease group to be stable with %d members: %v", n, err)
	}
}

func poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %v", timeout)
		case <-tick.C:
		}
	}
	return nil
}

func waitTerm(t *testing.T, terms <-chan *Term, what string) *Term {
	t.Helper()
	select {
	case term := <-terms:
		return term
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no lease within 60s", what)
		return nil
	}
}

// TestTakeover: the first member holds the lease and the second waits;
// when the first leaves, the second takes it at a later generation, and
// the first's term says it no longer holds it.
func TestTakeover(t *testing.T) {
	cfg, client := cluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := waitTerm(t, campaign(t, ctx, cfg), "first member")
	if !first.Held() || first.Generation() == 0 {
		t.Fatalf("first member: held %v at generation %d", first.Held(), first.Generation())
	}
	second := campaign(t, ctx, cfg)
	members(t, ctx, client, 2)
	select {
	case <-second:
		t.Fatal("the second member took the lease while the first holds it")
	default:
	}
	if err := poll(ctx, 30*time.Second, first.Held); err != nil {
		t.Fatal("the first member does not hold the lease after the second joined")
	}
	gen := first.Generation()
	first.Close()
	if first.Held() {
		t.Fatal("a closed term says it holds the lease")
	}
	took := waitTerm(t, second, "second member after the first left")
	defer took.Close()
	if took.Generation() <= gen {
		t.Fatalf("the second member took the lease at generation %d, not after the first's %d", took.Generation(), gen)
	}
}

// TestStandbyJoiningKeepsLeader: standbys joining one after the other
// rebalance the group each time, and the holder keeps the lease through
// every rebalance.
func TestStandbyJoiningKeepsLeader(t *testing.T) {
	cfg, client := cluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leader := waitTerm(t, campaign(t, ctx, cfg), "leader")
	defer leader.Close()
	var standbys []<-chan *Term
	for n := 2; n <= 3; n++ {
		standbys = append(standbys, campaign(t, ctx, cfg))
		members(t, ctx, client, n)
		if err := poll(ctx, 30*time.Second, leader.Held); err != nil {
			t.Fatalf("with %d members the leader does not hold the lease", n)
		}
	}
	for i, s := range standbys {
		select {
		case <-s:
			t.Fatalf("standby %d took the lease from a live leader", i)
		default:
		}
	}
	select {
	case <-leader.Lost():
		t.Fatalf("the leader lost its lease: %v", leader.Err())
	default:
	}
}

func TestChooseHolder(t *testing.T) {
	claim := func(g uint32) []byte { return (&keeper{}).claimBytes(g) }
	for _, tc := range []struct {
		name    string
		members []kafka.GroupMember
		want    string
	}{
		{"none", nil, ""},
		{"no claim: first by ID", []kafka.GroupMember{{ID: "b"}, {ID: "a"}}, "a"},
		{"the holder keeps it", []kafka.GroupMember{{ID: "a"}, {ID: "b", UserData: claim(4)}, {ID: "c"}}, "b"},
		{"the latest claim wins", []kafka.GroupMember{{ID: "a", UserData: claim(3)}, {ID: "b", UserData: claim(7)}}, "b"},
		{"bad user data is no claim", []kafka.GroupMember{{ID: "b", UserData: []byte{1}}, {ID: "a"}}, "a"},
	} {
		if got := chooseHolder(tc.members); got != tc.want {
			t.Errorf("%s: holder %q, want %q", tc.name, got, tc.want)
		}
	}
}
