package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// Config describes the lease group. Zero durations mean kafka-go's
// defaults (session 30s, rebalance 30s, heartbeat 3s, join backoff 5s).
type Config struct {
	Brokers []string
	Dialer  *kafka.Dialer // nil: kafka.DefaultDialer
	// Group is the consumer group of the candidates; Topic the lease
	// topic, of one partition, which must exist.
	Group string
	Topic string
	// SessionTimeout is how long a silent holder keeps the lease: a
	// paused or partitioned holder is replaced after it.
	SessionTimeout    time.Duration
	RebalanceTimeout  time.Duration
	HeartbeatInterval time.Duration
	JoinBackoff       time.Duration
	// Log receives the lease's changes; nil discards them.
	Log *slog.Logger
}

// ErrLost says that the holder lost the lease.
var ErrLost = errors.New("lease lost")

// Term is a member of the lease group: first a candidate (Campaign waits),
// then the holder until it loses the lease or closes the term.
type Term struct {
	cfg      Config
	log      *slog.Logger
	group    *kafka.ConsumerGroup
	balancer *keeper

	generation atomic.Int64 // at which the lease was taken; 0 before
	held       atomic.Bool  // a generation that grants the lease runs
	taken      chan struct{}
	lost       chan struct{}
	lostOnce   sync.Once
	reason     atomic.Value // string: why the lease was lost

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// Campaign joins the lease group and returns once this member holds the
// lease. It returns ctx's error when ctx ends first, having left the
// group. The returned Term must be closed.
func Campaign(ctx context.Context, cfg Config) (*Term, error) {
	t, err := join(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.taken:
		return t, nil
	case <-ctx.Done():
		t.Close()
		return nil, ctx.Err()
	}
}

// join starts following the lease group's generations.
func join(cfg Config) (*Term, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &keeper{}
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: cfg.Group, Brokers: cfg.Brokers, Dialer: cfg.Dialer, Topics: []string{cfg.Topic},
		GroupBalancers:    []kafka.GroupBalancer{b},
		SessionTimeout:    cfg.SessionTimeout,
		RebalanceTimeout:  cfg.RebalanceTimeout,
		HeartbeatInterval: cfg.HeartbeatInterval,
		JoinGroupBackoff:  cfg.JoinBackoff,
	})
	if err != nil {
		return nil, fmt.Errorf("lease group %s: %w", cfg.Group, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	t := &Term{cfg: cfg, log: log, group: group, balancer: b, taken: make(chan struct{}), lost: make(chan struct{}), stop: stop}
	t.wg.Go(func() { t.follow(ctx) })
	return t, nil
}

// follow takes each generation of the group until ctx ends or the group
// is closed.
func (t *Term) follow(ctx context.Context) {
	for {
		gen, err := t.group.Next(ctx)
		switch {
		case ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed):
			return
		case errors.Is(err, kafka.RebalanceInProgress):
			continue
		case err != nil:
			// kafka-go has left the group and will join again as a new
			// member: a holder has lost its lease.
			t.log.Warn("lease group", "group", t.cfg.Group, "error", err)
			if t.generation.Load() > 0 {
				t.lose(fmt.Sprintf("left the lease group: %v", err))
			}
			continue
		}
		t.generationStarted(gen)
	}
}

// generationStarted notes whether gen grants the lease to this member.
func (t *Term) generationStarted(gen *kafka.Generation) {
	mine := len(gen.Assignments[t.cfg.Topic]) > 0
	took := t.generation.Load()
	switch {
	case !mine && took > 0:
		t.lose(fmt.Sprintf("generation %d gave the lease to another member", gen.ID))
		return
	case !mine:
		t.log.Info("lease standby", "group", t.cfg.Group, "generation", gen.ID, "member", gen.MemberID)
		return
	case t.isLost():
		return
	}
	t.held.Store(true)
	gen.Start(func(ctx context.Context) {
		<-ctx.Done()
		t.held.Store(false)
	})
	if took > 0 {
		t.log.Info("lease kept", "group", t.cfg.Group, "generation", gen.ID, "taken_at", took)
		return
	}
	t.generation.Store(int64(gen.ID))
	t.balancer.claim(gen.ID)
	t.log.Info("lease taken", "group", t.cfg.Group, "generation", gen.ID, "member", gen.MemberID)
	// A committed offset keeps the group, and its generation count, on
	// brokers that drop empty groups without offsets.
	if err := gen.CommitOffsets(map[string]map[int]int64{t.cfg.Topic: {0: 0}}); err != nil {
		t.log.Warn("lease offset not committed", "error", err)
	}
	close(t.taken)
}

func (t *Term) lose(reason string) {
	t.lostOnce.Do(func() {
		t.held.Store(false)
		t.balancer.claim(0)
		t.reason.Store(reason)
		t.log.Warn("lease lost", "group", t.cfg.Group, "taken_at", t.generation.Load(), "reason", reason)
		close(t.lost)
	})
}

func (t *Term) isLost() bool {
	select {
	case <-t.lost:
		return true
	default:
		return false
	}
}

// Generation returns the group generation at which the lease was taken,
// the term's epoch; 0 before.
func (t *Term) Generation() uint64 { return uint64(t.generation.Load()) }

// Held reports whether a generation that grants this member the lease is
// running now. It is false while the group rebalances, even when the
// member keeps the lease after: a holder writes only while it is true.
func (t *Term) Held() bool { return t.held.Load() }

// Lost is closed when the lease is lost for good: another member holds
// it, or this one was expelled from the group.
func (t *Term) Lost() <-chan struct{} { return t.lost }

// Err returns ErrLost, with why, once the lease was lost; nil before.
func (t *Term) Err() error {
	if !t.isLost() {
		return nil
	}
	r, _ := t.reason.Load().(string)
	return fmt.Errorf("%w: %s", ErrLost, r)
}

// Close leaves the group, handing the lease on at once, and waits for the
// term's goroutine.
func (t *Term) Close() error {
	t.held.Store(false)
	err := t.group.Close()
	t.stop()
	t.wg.Wait()
	return err
}
