package service

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamer/brokers"
	"streamer/brokers/embedded"
)

// TestRejoinAfterQuickKills measures how long a `streamer run` started
// after k quick SIGKILLs waits before it consumes every input partition,
// for k in STREAMER_REJOIN_KILLS (for example "1,3,6"); it is a
// measurement, not a check, and is skipped when the variable is unset.
// STREAMER_REJOIN_BIN runs another build of the command (an older one, to
// compare); STREAMER_REJOIN_TRIALS repeats each k (default 3).
//
// Each trial streams examples into a fresh cluster, starts a process, kills
// it 0.4 to 1.6s after it logs that it consumes (as TestCrashSafety does),
// k times, then starts the last process and times, for each examples
// partition, the first commit after its start.
func TestRejoinAfterQuickKills(t *testing.T) {
	t.Parallel()
	spec := os.Getenv("STREAMER_REJOIN_KILLS")
	if spec == "" {
		t.Skip("set STREAMER_REJOIN_KILLS=1,3,6 to measure")
	}
	bin := os.Getenv("STREAMER_REJOIN_BIN")
	if bin == "" {
		bin = buildStreamer(t)
	}
	trials := envCount(t, "STREAMER_REJOIN_TRIALS", 3)
	for _, f := range strings.Split(spec, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("STREAMER_REJOIN_KILLS=%q", spec)
		}
		var waits []string
		for trial := range trials {
			d, err := rejoinAfterKills(t, bin, k, uint64(100*k+trial))
			if err != nil {
				t.Errorf("%d kills, trial %d: %v", k, trial, err)
				waits = append(waits, "failed")
				continue
			}
			waits = append(waits, d.Round(100*time.Millisecond).String())
		}
		t.Logf("after %d quick kills the last process consumed every partition in: %s", k, strings.Join(waits, ", "))
	}
}

// rejoinAfterKills runs one trial and returns the last process's wait.
func rejoinAfterKills(t *testing.T, bin string, kills int, seed uint64) (time.Duration, error) {
	cluster, err := embedded.Start(embedded.Config{Partitions: 2, Log: rejoinLogger()})
	if err != nil {
		return 0, err
	}
	defer cluster.Close()
	addr := cluster.Addrs()[0]
	conn, err := (brokers.Config{Brokers: []string{addr}}).Connect([]string{addr})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	producing := make(chan struct{})
	go func() { defer close(producing); produceStream(ctx, t, addr, 1_000_000, 500) }()
	defer func() { cancel(); <-producing }()

	dir := t.TempDir()
	r := rand.New(rand.NewPCG(seed, 5))
	for n := range kills {
		p, err := startProcess(t, bin, addr, dir, n)
		if err != nil {
			return 0, err
		}
		if err := poll(ctx, time.Minute, func() bool { _, ok := p.restoredVersion(); return ok }); err != nil {
			return 0, fmt.Errorf("process %d to start consuming: %w", n, err)
		}
		time.Sleep(time.Duration(400+r.IntN(1200)) * time.Millisecond) // the kill's random point, as TestCrashSafety
		p.kill()
	}
	before, err := conn.Positions(ctx, "streamer", "examples")
	if err != nil {
		return 0, err
	}
	start := time.Now()
	last, err := startProcess(t, bin, addr, dir, kills)
	if err != nil {
		return 0, err
	}
	defer last.kill()
	var wait time.Duration
	for _, b := range before {
		err := poll(ctx, 3*time.Minute, func() bool {
			now, err := conn.Positions(ctx, "streamer", "examples")
			return err == nil && len(now) > b.Partition && now[b.Partition].Committed > b.Committed
		})
		if err != nil {
			return 0, fmt.Errorf("examples[%d] never committed after the last start: %w\n%s", b.Partition, err, last.tail(10))
		}
		wait = max(wait, time.Since(start))
	}
	if testing.Verbose() {
		t.Logf("started %s; the last process's log:\n%s", start.Format("15:04:05.000"), last.tail(40))
	}
	return wait, nil
}

// rejoinLogger shows what the embedded cluster sees of the group in
// verbose runs.
func rejoinLogger() *slog.Logger {
	if !testing.Verbose() {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
