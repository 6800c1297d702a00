package brokers

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"streamer/brokers/embedded"
)

// metadataRefreshes counts the goroutines of kafka-go transports that
// refresh a cluster's metadata in the background, one per cluster a
// transport has reached.
func metadataRefreshes() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("kafka-go.(*connPool).discover("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// settledRefreshes returns metadataRefreshes once it has stopped falling:
// the refreshes of transports an earlier test closed end a moment later.
func settledRefreshes() int {
	n := metadataRefreshes()
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		m := metadataRefreshes()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

// TestCloseStopsTheMetadataRefresh checks that closing a connection stops
// the background refresh of its transport (a cluster closes the connection
// it keeps to itself the same way): left running, it dials the address for
// the life of the process, and reads whatever answers there once the port
// is reused.
func TestCloseStopsTheMetadataRefresh(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := settledRefreshes()
	cluster, err := embedded.Start(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	conn, err := Config{Brokers: []string{Embedded}}.Connect(cluster.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.EnsureTopics(ctx, Topic{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Partitions(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if n := metadataRefreshes(); n <= before {
		t.Fatalf("%d metadata refreshes with a connection in use, %d before: the test sees none", n, before)
	}
	conn.Close()
	cluster.Close()
	deadline := time.Now().Add(10 * time.Second)
	for metadataRefreshes() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d metadata refreshes still run after Close, %d before", metadataRefreshes(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
