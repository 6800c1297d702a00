package control

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/snapshot"
)

func TestRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	zero, two := uint64(0), uint64(2)
	for _, p := range []Pin{
		{Model: "m", Pinned: true, Version: 7, At: at},
		{Model: "m", Pinned: true, Version: 7, Epoch: &zero, At: at},
		{Model: "m", Pinned: true, Version: 7, Epoch: &two, At: at},
		{Model: "m", At: at},
	} {
		msg, err := Record(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseRecord(msg.Key, msg.Value)
		if err != nil || !reflect.DeepEqual(got, p) || got.Selector() != p.Selector() {
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

// TestPinSelector: an order names the version of one epoch, epoch 0
// included; an order written before epochs were named (no epoch) names the
// version under any epoch.
func TestPinSelector(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  snapshot.Selector
	}{
		{`{"model":"m","pinned":true,"version":5,"at":"2026-01-01T00:00:00Z"}`, snapshot.AnyEpochVersion(5)},
		{`{"model":"m","pinned":true,"version":5,"epoch":0,"at":"2026-01-01T00:00:00Z"}`, snapshot.Exactly(snapshot.Stamp{Version: 5})},
		{`{"model":"m","pinned":true,"version":5,"epoch":3,"at":"2026-01-01T00:00:00Z"}`, snapshot.Exactly(snapshot.Stamp{Epoch: 3, Version: 5})},
	} {
		p, err := ParseRecord([]byte("m"), []byte(tc.value))
		if err != nil || p.Selector() != tc.want {
			t.Errorf("%s: selects %v (%v), want %v", tc.value, p.Selector(), err, tc.want)
		}
	}
	if p := PinStamp("m", snapshot.Stamp{Epoch: 4, Version: 9}); !p.Pinned || p.Selector() != snapshot.Exactly(snapshot.Stamp{Epoch: 4, Version: 9}) {
		t.Errorf("PinStamp: %+v", p)
	}
	sel := snapshot.Exactly(snapshot.Stamp{Epoch: 3, Version: 5})
	for _, tc := range []struct {
		st       snapshot.Stamp
		exact    bool
		anyEpoch bool
	}{
		{snapshot.Stamp{Epoch: 3, Version: 5}, true, true},
		{snapshot.Stamp{Epoch: 2, Version: 5}, false, true},
		{snapshot.Stamp{Epoch: 3, Version: 6}, false, false},
	} {
		if got := sel.Matches(tc.st); got != tc.exact {
			t.Errorf("%v matches %v: %v", sel, tc.st, got)
		}
		if got := snapshot.AnyEpochVersion(5).Matches(tc.st); got != tc.anyEpoch {
			t.Errorf("version 5 of any epoch matches %v: %v", tc.st, got)
		}
	}
}

func testConnection(t *testing.T) *brokers.Connection {
	t.Helper()
	cluster, err := embedded.Start(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	conn, err := brokers.Config{Brokers: []string{brokers.Embedded}}.Connect(cluster.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// waitPin waits for a change whose order is (version, pinned).
func waitPin(t *testing.T, f *Follower, version uint64, pinned bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if sel, p := f.Current(); sel.Version == version && p == pinned {
			return
		}
		select {
		case <-f.Changed():
		case <-deadline:
			sel, p := f.Current()
			t.Fatalf("order is (%v, %v), want (version %d, %v)", sel, p, version, pinned)
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
	if sel, pinned := f.Current(); sel.Version != 3 || !pinned {
		t.Fatalf("caught up on (%v, %v), want version 3 pinned", sel, pinned)
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

// TestFollowerSignalsEveryNewOrder: an order that changes only the epoch
// is a new order (the same version of another learner's term), and one
// that repeats the last is not.
func TestFollowerSignalsEveryNewOrder(t *testing.T) {
	f := NewFollower(nil, "control", "m", nil)
	signaled := func() bool {
		select {
		case <-f.Changed():
			return true
		default:
			return false
		}
	}
	zero := uint64(0)
	for i, tc := range []struct {
		p    Pin
		want bool
	}{
		{PinStamp("m", snapshot.Stamp{Epoch: 1, Version: 5}), true},
		{PinStamp("m", snapshot.Stamp{Epoch: 1, Version: 5}), false},
		{PinStamp("m", snapshot.Stamp{Epoch: 2, Version: 5}), true},
		{Pin{Model: "m", Pinned: true, Version: 5}, true}, // of any epoch
		{Pin{Model: "m", Pinned: true, Version: 5, Epoch: &zero}, true},
		{Pin{Model: "m"}, true},
		{Pin{Model: "m"}, false},
	} {
		msg, err := Record(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		f.take(msg)
		if got := signaled(); got != tc.want {
			t.Errorf("order %d (%v, pinned %v): changed %v, want %v", i, tc.p.Selector(), tc.p.Pinned, got, tc.want)
		}
	}
}
