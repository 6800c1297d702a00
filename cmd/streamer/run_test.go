package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// logBuffer takes the JSON logs of a command while a test reads them.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// event returns the first log event whose message is msg.
func (l *logBuffer) event(msg string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil && e["msg"] == msg {
			return e, true
		}
	}
	return nil, false
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunOnTheEmbeddedBroker: `streamer run` with kafka.brokers
// [embedded], asked for, starts the in-process broker, runs the service
// on it, consumes what is produced there, and stops cleanly when its
// context ends.
func TestRunOnTheEmbeddedBroker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs logBuffer
	cmd := newRootCommand()
	cmd.SetOut(io.Discard)
	cmd.SetErr(&logs)
	cmd.SetArgs([]string{"run", "--set", "kafka.brokers=embedded", "--set", "http.listen=127.0.0.1:0", "--set", "kafka.partitions=1"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	within := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			select {
			case err := <-done:
				t.Fatalf("streamer run returned (%v) while waiting for %s\n%s", err, what, logs.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var started, listening map[string]any
	within("the service to consume", time.Minute, func() bool {
		_, consuming := logs.event("consuming")
		started, _ = logs.event("embedded Kafka cluster started")
		listening, _ = logs.event("http")
		return consuming && started != nil && listening != nil
	})
	addrs, _ := started["addrs"].([]any)
	if len(addrs) != 1 {
		t.Fatalf("embedded cluster addresses %v", started["addrs"])
	}
	broker, _ := addrs[0].(string)

	const n = 20
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(broker), Topic: "examples", Transport: tr, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: fmt.Appendf(nil, "e%d", i), Value: fmt.Appendf(nil, `{"id": "e%d", "text": "a few words %d"}`, i, i)}
	}
	// The examples topic is the user's: it exists once the group's reader
	// has asked for it, which may come after the service says it consumes.
	within("the examples to be written", time.Minute, func() bool {
		return w.WriteMessages(ctx, msgs...) == nil
	})
	metrics := "http://" + listening["listen"].(string) + "/metrics"
	want := fmt.Sprintf(`streamer_records_consumed_total{topic="examples"} %d`, n)
	within("the examples to be consumed", time.Minute, func() bool {
		resp, err := http.Get(metrics)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(body), want)
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("streamer run: %v\n%s", err, logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("streamer run did not stop\n%s", logs.String())
	}
	if _, ok := logs.event("stopped"); !ok {
		t.Fatalf("no stopped event:\n%s", logs.String())
	}
}

// TestRunWithoutBrokersRefuses: kafka.brokers has no default; run refuses
// to start without it, and says how to set it (the key, the variable) and
// how to ask for the embedded broker. The commands that need a running
// cluster refuse both.
func TestRunWithoutBrokersRefuses(t *testing.T) {
	_, err := runErr("run", "--set", "http.listen=127.0.0.1:0")
	for _, want := range []string{"kafka.brokers is not set", "STREAMER_KAFKA_BROKERS=", "--set kafka.brokers=embedded"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run without brokers: err = %v, want it to say %q", err, want)
		}
	}
	for _, args := range [][]string{
		{"model", "list"},
		{"model", "list", "--set", "kafka.brokers=embedded"},
		{"replay", "--from", "0", "--retrain", "--out-file", filepath.Join(t.TempDir(), "out.jsonl")},
		{"snapshot", "inspect", "--topic"},
	} {
		_, err := runErr(args...)
		if err == nil || !strings.Contains(err.Error(), "kafka.brokers") || !strings.Contains(err.Error(), "STREAMER_KAFKA_BROKERS") {
			t.Errorf("streamer %s: err = %v, want it to say how to set kafka.brokers", strings.Join(args, " "), err)
		}
	}
}
