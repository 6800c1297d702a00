package service

import (
	"context"
	"testing"
	"time"
)

// TestFirstSolveIsPublished: with a snapshot cadence that would not publish
// for an hour, the first model a process solves is published at once (a
// scorer has no model until a snapshot exists), and the next solves wait
// for the cadence.
func TestFirstSolveIsPublished(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs, "snapshot.every_solves=1000", "snapshot.every=1h")
	run := startService(t, cfg, testLogger(t))
	stream := newStreamWriter(t, addrs, 5)
	stream.write(t, ctx, 300)
	waitFor(t, "a first snapshot", time.Minute, func() bool { return run.svc.Status().Snapshots == 1 })
	for range 3 {
		solves := run.svc.Status().Pipeline.Solves
		stream.write(t, ctx, 200)
		waitFor(t, "another solve", time.Minute, func() bool { return run.svc.Status().Pipeline.Solves > solves })
	}
	if n := run.svc.Status().Snapshots; n != 1 {
		t.Fatalf("%d snapshots published before the cadence allowed a second", n)
	}
}
