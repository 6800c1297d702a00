package consumer

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"streamer/brokers"
)

// partitionProgress is what the liveness watch remembers of a partition.
type partitionProgress struct {
	committed int64
	at        time.Time // last time the committed offset moved, or the partition had no lag
}

// liveness watches every partition of the input topics from the brokers'
// side: the high watermark against the group's committed offset. A
// partition that has lag and whose committed offset has not moved for
// kafka.stall_timeout is stalled, whatever the reason (a partition reader
// that died inside kafka-go, a partition the group gave to a member that is
// gone). It is used by one goroutine only.
type liveness struct {
	c        *Consumer
	progress map[partitionKey]partitionProgress
	gap      bool // the last check failed: progress could not be seen
}

// stalled is one stalled partition and why.
type stalled struct {
	key   partitionKey
	lag   int64
	since time.Duration
}

func (st stalled) String() string {
	return fmt.Sprintf("%s: %d records behind, no progress for %v", st.key, st.lag, st.since.Round(time.Second))
}

// checkInterval is how often the partitions are measured.
func (c *Consumer) checkInterval() time.Duration {
	return min(max(c.Config.Kafka.StallTimeout/4, 100*time.Millisecond), 5*time.Second)
}

// check measures every input partition once, updates the lag, progress and
// stall metrics, and returns the stalled partitions.
func (l *liveness) check(ctx context.Context, now time.Time) ([]stalled, error) {
	c := l.c
	var out []stalled
	seen := 0
	for _, topic := range c.Topics {
		ps, err := c.Conn.Positions(ctx, c.Config.Kafka.Group, topic)
		if err != nil {
			l.gap = true
			return nil, err
		}
		seen += len(ps)
		for _, p := range ps {
			if st, ok := l.observe(partitionKey{topic, p.Partition}, p, now); ok {
				out = append(out, st)
			}
		}
	}
	// No partition known: nothing above went past the transport's metadata
	// cache, which a broker that is away leaves as it was.
	if seen == 0 {
		if err := c.Conn.Ping(ctx); err != nil {
			l.gap = true
			return nil, err
		}
	}
	// Time during which the brokers did not answer is not held against a
	// partition: no one could commit then.
	l.gap = false
	return out, nil
}

// observe records one partition's position and reports whether it is
// stalled.
func (l *liveness) observe(k partitionKey, p brokers.Position, now time.Time) (stalled, bool) {
	c := l.c
	lag := l.lag(p)
	prev, seen := l.progress[k]
	if !seen || l.gap || p.Committed != prev.committed || lag == 0 {
		prev.at = now
	}
	prev.committed = p.Committed
	l.progress[k] = prev
	part := strconv.Itoa(k.partition)
	c.Metrics.Lag.WithLabelValues(k.topic, part).Set(float64(lag))
	c.Metrics.LastProgress.WithLabelValues(k.topic, part).Set(float64(prev.at.UnixMilli()) / 1e3)
	idle := now.Sub(prev.at)
	stuck := lag > 0 && idle >= c.Config.Kafka.StallTimeout
	c.Metrics.Stalled.WithLabelValues(k.topic, part).Set(b2f(stuck))
	return stalled{key: k, lag: lag, since: idle}, stuck
}

// lag is the records of p not yet committed by the group. A group that
// never committed starts at the first offset (kafka.start: earliest) or at
// the end (latest).
func (l *liveness) lag(p brokers.Position) int64 {
	from := p.Committed
	if from < 0 {
		from = p.First
		if l.c.Config.Kafka.Start == "latest" {
			from = p.End
		}
	}
	return max(p.End-max(from, p.First), 0)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// WatchLiveness checks the input partitions of kafka.group every checkInterval until ctx
// ends. It keeps the stall reason /readyz reports, and asks for a new
// reader on stalls: at most once per stall_timeout, so that a new reader
// has the time to join the group and make progress.
func (c *Consumer) WatchLiveness(ctx context.Context, restart chan<- string) {
	l := &liveness{c: c, progress: map[partitionKey]partitionProgress{}}
	tick := time.NewTicker(c.checkInterval())
	defer tick.Stop()
	var asked, failing time.Time
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		now := time.Now()
		cctx, cancel := context.WithTimeout(ctx, max(c.checkInterval(), 5*time.Second))
		stalls, err := l.check(cctx, now)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.Metrics.Retries.WithLabelValues("liveness").Inc()
				c.Log.Warn("liveness check failed", "error", err)
				failing = c.unreachable(failing, now, err)
			}
			continue
		}
		if !failing.IsZero() {
			failing = time.Time{}
			c.Metrics.Unreachable.Set(0)
			c.Log.Info("liveness check passes again")
		}
		if len(stalls) == 0 {
			c.Status.stall.Store("")
			continue
		}
		reasons := make([]string, len(stalls))
		for i, st := range stalls {
			reasons[i] = st.String()
		}
		reason := "stalled: " + strings.Join(reasons, "; ")
		c.Status.stall.Store(reason)
		// A reader waiting for the schema registry is not helped by a new
		// one, which would wait as well.
		if now.Sub(asked) < c.Config.Kafka.StallTimeout || c.Status.Registry() != "" {
			continue
		}
		asked = now
		for _, st := range stalls {
			c.Log.Warn("partition stalled", "topic", st.key.topic, "partition", st.key.partition, "lag", st.lag, "since", st.since.String())
		}
		select {
		case restart <- reason:
		default:
		}
	}
}

// unreachable records a liveness check that failed at now, the checks
// having failed since since (zero: this one is the first), and returns
// when they began to fail. Once they have failed for kafka.stall_timeout,
// /readyz says so with the last error: the brokers are unreachable (then
// nothing is consumed or published either) or refuse the check, and no
// stall could be seen. kafka-go's readers and writers reconnect on their
// own; the next check that succeeds puts the partitions' own state back.
func (c *Consumer) unreachable(since, now time.Time, err error) time.Time {
	if since.IsZero() {
		since = now
	}
	if d := now.Sub(since); d >= c.Config.Kafka.StallTimeout {
		c.Status.stall.Store(fmt.Sprintf("liveness check failing for %v: %v", d.Round(time.Second), err))
		c.Metrics.Unreachable.Set(1)
	}
	return since
}
