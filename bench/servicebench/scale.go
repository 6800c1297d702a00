package servicebench

import (
	"context"
	"fmt"
	"time"

	"streamer/brokers"
	"streamer/brokers/brokerstest"
)

// ScaleConfig describes `streamer bench scale`: scorer replicas sharing
// the partitions of a filled topic, and the takeover of a standby learner.
type ScaleConfig struct {
	Executable string // the streamer binary to run
	Examples   int    // examples written before the scorers start; 0 means 100,000
	Scorers    []int  // the numbers of scorers to measure; empty means 1, 2 and 4
	Partitions int    // partitions of the input topics; 0 means 8
	// SessionTimeout is kafka.session_timeout of every process; 0 means 6s,
	// the embedded broker's least.
	SessionTimeout time.Duration
	Set            []string      // more --set overrides for every process
	Timeout        time.Duration // bound on each phase; 0 means 10 minutes
	// RollingScorers is the number of scorers restarted one by one; 0
	// means 3.
	RollingScorers int
	// RollingRate is the examples per second streamed during the rolling
	// restart; 0 means 400.
	RollingRate int
}

// ScaleRun is one measure of the scorers.
type ScaleRun struct {
	Scorers        int     `json:"scorers"`
	Seconds        float64 `json:"seconds"`
	ExamplesPerSec float64 `json:"examples_per_sec"`
}

// ScaleReport is what `streamer bench scale` prints. A takeover time runs
// from the active learner's end (SIGKILL, or SIGTERM: it leaves the lease
// group) to the standby's /readyz answering 200: lease taken, newest
// snapshot restored, window rebuilt, partitions read.
type ScaleReport struct {
	Examples              int        `json:"examples"`
	Partitions            int        `json:"partitions"`
	Runs                  []ScaleRun `json:"runs"`
	SessionTimeoutSeconds float64    `json:"session_timeout_seconds"`
	TakeoverKillSeconds   float64    `json:"takeover_after_kill_seconds"`
	TakeoverStopSeconds   float64    `json:"takeover_after_stop_seconds"`
	Rolling               Rolling    `json:"rolling_restart"`
}

// Rolling is the rolling restart of a group of scorers while examples
// stream in: each in turn gets SIGTERM, and a new one starts and joins
// before the next goes. Rebalances counts the times the group left the
// Stable state (polled every 25 ms); LongestPauseSeconds is the longest
// time an input partition went without a prediction from the first
// SIGTERM on.
type Rolling struct {
	Scorers             int     `json:"scorers"`
	Rate                int     `json:"examples_per_sec"`
	Seconds             float64 `json:"seconds"`
	Rebalances          int     `json:"rebalances"`
	LongestPauseSeconds float64 `json:"longest_pause_seconds"`
}

// Scale fills an embedded broker, runs two learners as child processes
// and times the standby's takeover after the active one is killed, then
// after it is stopped; then it stops the learners and, for each number of
// scorers, times that many scorer processes (a group of their own each
// time) from their start until their group has committed the end of every
// partition of the examples topic.
func Scale(ctx context.Context, cfg ScaleConfig) (rep ScaleReport, err error) {
	cfg = cfg.withDefaults()
	rep.Examples, rep.Partitions, rep.SessionTimeoutSeconds = cfg.Examples, cfg.Partitions, cfg.SessionTimeout.Seconds()
	timeouts := []string{"kafka.session_timeout=" + cfg.SessionTimeout.String(), "kafka.rebalance_timeout=" + cfg.SessionTimeout.String()}
	fc, err := fillCluster(ctx, cfg.Partitions, append(timeouts, cfg.Set...), DrainConfig{Examples: cfg.Examples, LabelRate: 0.05})
	if err != nil {
		return rep, err
	}
	defer fc.Close()
	sc, conn, sets, topics := fc.config, fc.conn, fc.sets, fc.config.Kafka.Topics
	if rep.TakeoverKillSeconds, rep.TakeoverStopSeconds, err = takeovers(ctx, cfg, sets, conn, sc.Kafka.Group+"-lease"); err != nil {
		return rep, err
	}
	for _, n := range cfg.Scorers {
		run, err := scorers(ctx, cfg, sets, conn, topics.Examples, n)
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, run)
	}
	rep.Rolling, err = rollingRestart(ctx, cfg, sets, conn, topics.Examples, topics.Predictions)
	return rep, err
}

func (c ScaleConfig) withDefaults() ScaleConfig {
	if c.Examples <= 0 {
		c.Examples = 100000
	}
	if len(c.Scorers) == 0 {
		c.Scorers = []int{1, 2, 4}
	}
	if c.Partitions <= 0 {
		c.Partitions = 8
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 6 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.RollingScorers <= 0 {
		c.RollingScorers = 3
	}
	if c.RollingRate <= 0 {
		c.RollingRate = 400
	}
	return c
}

// takeovers measures a standby learner's takeover after the active one is
// killed, then after it is stopped, and stops every learner.
func takeovers(ctx context.Context, cfg ScaleConfig, sets []string, conn *brokers.Connection, leaseGroup string) (kill, stop float64, err error) {
	active, err := startChild(cfg.Executable, append(sets, "role=learner"))
	if err != nil {
		return 0, 0, err
	}
	defer active.stop()
	if err := active.waitReady(ctx, cfg.Timeout); err != nil {
		return 0, 0, fmt.Errorf("the first learner: %w", err)
	}
	standby, err := startChild(cfg.Executable, append(sets, "role=learner"))
	if err != nil {
		return 0, 0, err
	}
	defer standby.stop()
	if err := waitMembers(ctx, conn, leaseGroup, 2, cfg.Timeout); err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	active.kill()
	if err := standby.waitReady(ctx, cfg.Timeout); err != nil {
		return 0, 0, fmt.Errorf("the standby after the kill: %w", err)
	}
	kill = time.Since(t0).Seconds()

	next, err := startChild(cfg.Executable, append(sets, "role=learner"))
	if err != nil {
		return kill, 0, err
	}
	defer next.stop()
	if err := waitMembers(ctx, conn, leaseGroup, 2, cfg.Timeout); err != nil {
		return kill, 0, err
	}
	t0 = time.Now()
	if err := standby.stop(); err != nil {
		return kill, 0, fmt.Errorf("stop the active learner: %w", err)
	}
	if err := next.waitReady(ctx, cfg.Timeout); err != nil {
		return kill, 0, fmt.Errorf("the standby after the stop: %w", err)
	}
	return kill, time.Since(t0).Seconds(), next.stop()
}

// scorers times n scorers, in a group of their own, from their start to
// their group's last commit on the examples topic; a scorer that exits
// ends the wait.
func scorers(ctx context.Context, cfg ScaleConfig, sets []string, conn *brokers.Connection, examples string, n int) (ScaleRun, error) {
	run := ScaleRun{Scorers: n}
	group := fmt.Sprintf("scale-%d", n)
	var children []*child
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	start := time.Now()
	for range n {
		c, err := startChild(cfg.Executable, append(sets, "role=scorer", "kafka.group="+group))
		if err != nil {
			return run, err
		}
		children = append(children, c)
	}
	if err := waitCommitted(ctx, conn, group, []string{examples}, cfg.Timeout, children...); err != nil {
		return run, fmt.Errorf("%d scorers: %w", n, err)
	}
	run.Seconds = time.Since(start).Seconds()
	run.ExamplesPerSec = float64(cfg.Examples) / run.Seconds
	return run, nil
}

// waitMembers waits until the group is stable with n members.
func waitMembers(ctx context.Context, conn *brokers.Connection, group string, n int, timeout time.Duration) error {
	return pollUntil(ctx, timeout, func() bool {
		state, members, err := brokerstest.DescribeGroup(ctx, conn.Client(), group)
		return err == nil && state == "Stable" && len(members) == n
	}, fmt.Sprintf("group %s stable with %d members", group, n))
}
