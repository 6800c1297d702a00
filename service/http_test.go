package service

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"streamer/brokers/embedded"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	svc, stop := runService(t, testConfig(t, addrs))
	<-svc.Started()
	base := "http://" + svc.HTTPAddr()
	if !strings.HasPrefix(svc.HTTPAddr(), "127.0.0.1:") {
		t.Fatalf("listening on %s", svc.HTTPAddr())
	}
	if code, _ := get(t, base+"/livez"); code != http.StatusOK {
		t.Fatalf("/livez: %d", code)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no model") {
		t.Fatalf("/readyz before any model: %d %q", code, body)
	}
	stream := newStreamWriter(t, addrs, 4)
	stream.write(t, ctx, 300)
	stream.w.WriteMessages(ctx, kafkaMessage("examples", "junk", "{"))
	waitFor(t, "ready", 30*time.Second, func() bool { code, _ := get(t, base+"/readyz"); return code == http.StatusOK })
	waitFor(t, "a dead letter", 30*time.Second, func() bool { return svc.Status().DeadLetters > 0 })
	// Lag is measured from the brokers' side every few seconds.
	waitFor(t, "the lag of examples[0]", 30*time.Second, func() bool {
		return metric(t, base, `streamer_consumer_lag{partition="0",topic="examples"}`) >= 0
	})
	_, metrics := get(t, base+"/metrics")
	for _, name := range []string{
		`streamer_records_consumed_total{topic="examples"}`,
		"streamer_predictions_published_total",
		"streamer_labels_joined_total",
		"streamer_labels_dropped_total 0",
		`streamer_dead_letters_total{reason="malformed_json",topic="examples"} 1`,
		"streamer_consumer_lag",
		"streamer_consumer_last_progress_timestamp_seconds",
		"streamer_consumer_stalled",
		`streamer_consumer_restarts_total{reason="stall"} 0`,
		"streamer_solve_duration_seconds_bucket",
		"streamer_model_version",
		"streamer_window_examples",
		"streamer_window_kept_ratio 1",
		"streamer_window_too_old_total 0",
		"streamer_window_insert_paused_seconds_total 0",
		"streamer_snapshots_published_total",
		"go_goroutines",
	} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestReadyzSaysWhatTheStartWaitsFor starts the service before its
// brokers: /readyz says which step of the start it is at and what failed
// last, where it used to say only "no model loaded yet"; once the brokers
// are up the service starts and becomes ready.
func TestReadyzSaysWhatTheStartWaitsFor(t *testing.T) {
	t.Parallel()
	// A port no other test's broker can take meanwhile, which would
	// answer the service.
	addr, release := reservePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	svc, stop := runService(t, testConfig(t, []string{addr}))
	var base string
	waitFor(t, "the HTTP server", 30*time.Second, func() bool { base = "http://" + svc.HTTPAddr(); return svc.HTTPAddr() != "" })
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, b := get(t, base+"/readyz")
		body = b
		if code == http.StatusServiceUnavailable && strings.Contains(body, "starting: creating the topics") &&
			strings.Contains(body, "retrying create topics: ") && strings.Contains(body, addr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz does not say what the start waits for: %d %s", code, body)
		}
	}
	t.Logf("/readyz: %s", strings.TrimSpace(body))

	release()
	cluster, err := embedded.Start(embedded.Config{Partitions: 2, Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	newStreamWriter(t, []string{addr}, 8).write(t, ctx, 200)
	waitFor(t, "ready", time.Minute, func() bool { code, _ := get(t, base+"/readyz"); return code == http.StatusOK })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
