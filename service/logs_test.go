package service

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCaughtUpConsumerLogsNoWarning runs the service on empty topics, then
// on a few records until it has caught up: waiting at the end of a
// partition is normal operation and logs no warning (kafka-go's reader
// used to time out its own fetches there, "unknown error … i/o timeout").
func TestCaughtUpConsumerLogsNoWarning(t *testing.T) {
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var logs lockedBuffer
	run := startService(t, testConfig(t, addrs), newTextLogger(&logs))
	<-run.svc.Started()
	stream := newStreamWriter(t, addrs, 21)
	stream.write(t, ctx, 200)
	waitFor(t, "every example", 30*time.Second, func() bool { return run.svc.Status().Pipeline.Examples >= 200 })
	// Several fetches wait at the end of every partition meanwhile.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(logs.String(), "level=WARN") {
			break
		}
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("normal operation logged: %s", line)
		}
	}
}
