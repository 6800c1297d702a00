package embedded

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers/brokerstest"
)

// syncBuffer is a log sink tests can read while the cluster writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSessionKeeperEndsAVanishedJoiner has a process "killed" while its
// JoinGroup waits (the join is sent and the connection closed) beside a
// live kafka-go consumer. kfake alone ends that member's session only when
// it managed to deliver the join answer, about one time in two
// (TestVanishedJoinerStallIsDetectedAndRecovered in service shows the
// other case); the keeper must end it, and the live consumer must then
// get, and read, both partitions.
func TestSessionKeeperEndsAVanishedJoiner(t *testing.T) {
	var logs syncBuffer
	c, err := Start(Config{Partitions: 2, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.Addrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const session = 6 * time.Second
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Balancer: &kafka.RoundRobin{}, AllowAutoTopicCreation: true, BatchTimeout: time.Millisecond, Transport: tr}
	defer w.Close()
	write := func(n int) {
		t.Helper()
		msgs := make([]kafka.Message, n)
		for i := range msgs {
			msgs[i] = kafka.Message{Topic: "t", Value: fmt.Appendf(nil, "%d", i)}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	write(20)
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{addr}, GroupID: "g", GroupTopics: []string{"t"}, StartOffset: kafka.FirstOffset,
		SessionTimeout: session, RebalanceTimeout: session, HeartbeatInterval: session / 4, MaxWait: 100 * time.Millisecond,
	})
	defer r.Close()
	read := map[int]int{} // records read per partition
	readAll := func(n int) {
		t.Helper()
		for total := 0; total < n; total++ {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				t.Fatalf("read: %v (per partition: %v)", err, read)
			}
			read[m.Partition]++
		}
	}
	readAll(20)

	members := func() (string, int) {
		state, ms, err := brokerstest.GroupState(ctx, addr, "g")
		if err != nil {
			t.Fatal(err)
		}
		return state, len(ms)
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	const ended = "they left the group"
	for attempt := 1; !strings.Contains(logs.String(), ended); attempt++ {
		if attempt > 8 {
			t.Fatal("kfake delivered every lost join's answer in 8 tries; the keeper was never needed")
		}
		if err := brokerstest.JoinAndVanish(addr, "g", []string{"t"}, session, session); err != nil {
			t.Fatal(err)
		}
		// The vanished member is gone by its session timer or by the
		// keeper; either way the group ends up with the live consumer only.
		poll("the group to be left with its live member", func() bool { state, n := members(); return state == "Stable" && n == 1 })
	}
	t.Logf("keeper: %s", strings.TrimSpace(logs.String()))
	write(40)
	readAll(40)
	if read[0] == 0 || read[1] == 0 || read[0]+read[1] != 60 {
		t.Fatalf("records read per partition: %v", read)
	}
}
