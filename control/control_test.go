package control

import (
	"context"
	"sync"
	"testing"
	"time"

	"streamer/brokers"
)

func TestRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for _, p := range []Pin{
		{Model: "m", Pinned: true, Version: 7, At: at},
		{Model: "m", At: at},
	} {
		msg, err := Record(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseRecord(msg.Key, msg.Value)
		if err != nil || got != p {
			t.Fatalf("%+v came back as %+v, %v", p, got, err)
		}
	}
	for _, bad := range []Pin{{Pinned: true, Version: 1}, {Model: "m", Pinned: true}} {
		if _, err := Record(bad); err == nil {
			t.Errorf("Record(%+v) succeeded", bad)
		}
	}
	if p, err := ParseRecord([]byte("m"), nil); err != nil || p.Pinned || p.Model != "m" {
		t.Errorf("a tombstone reads as %+v, %v; want unpinned", p, err)
	}
	for _, value := range []string{`{"model":"other","pinned":true,"version":2}`, `{"model":"m","pinned":true}`, `{`} {
		if p, err := ParseRecord([]byte("m"), []byte(value)); err == nil {
			t.Errorf("%s read as %+v", value, p)
		}
	}
}

func testConnection(t *testing.T) *brokers.Connection {
	t.Helper()
	cluster, err := brokers.StartCluster(brokers.ClusterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	conn, err := brokers.Config{Brokers: []string{brokers.Embedded}}.Connect(cluster.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// waitPin waits for a change whose order is (version, pinned).
func waitPin(t *testing.T, f *Follower, version uint64, pinned bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if v, p := f.Current(); v == version && p == pinned {
			return
		}
		select {
		case <-f.Changed():
		case <-deadline:
			v, p := f.Current()
			t.Fatalf("order is (%d, %v), want (%d, %v)", v, p, version, pinned)
		}
	}
}

// TestFollowerCatchesUpAndFollows writes orders before a follower starts
// and while it follows: it catches up on the last one of its model, sees
// each new one, and passes over the other model's.
func TestFollowerCatchesUpAndFollows(t *testing.T) {
	conn := testConnection(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := NewFollower(conn, "control", "m", nil)
	if err := f.CatchUp(ctx); err != nil {
		t.Fatalf("catch up on a missing topic: %v", err)
	}
	if _, pinned := f.Current(); pinned {
		t.Fatal("pinned before any order")
	}
	for _, p := range []Pin{{Model: "m", Pinned: true, Version: 2}, {Model: "m", Pinned: true, Version: 3}, {Model: "other", Pinned: true, Version: 9}} {
		if err := Write(ctx, conn, "control", p); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if v, pinned := f.Current(); v != 3 || !pinned {
		t.Fatalf("caught up on (%d, %v), want version 3 pinned", v, pinned)
	}

	followCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := f.Follow(followCtx, 50*time.Millisecond); err != nil {
			t.Error(err)
		}
	})
	defer func() { stop(); wg.Wait() }()
	if err := Write(ctx, conn, "control", Pin{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	waitPin(t, f, 0, false)
	if err := Write(ctx, conn, "control", Pin{Model: "other"}); err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, conn, "control", Pin{Model: "m", Pinned: true, Version: 5}); err != nil {
		t.Fatal(err)
	}
	waitPin(t, f, 5, true)
	if p := f.Pin(); p.Model != "m" {
		t.Fatalf("the other model's order was taken: %+v", p)
	}
}
