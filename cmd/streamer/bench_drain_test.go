package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// asStreamer makes the test binary act as the streamer command when set,
// so that the benchmarks that run the service as a child process can run
// it from a test. Not a STREAMER_ variable: those must name configuration
// keys.
const asStreamer = "TEST_BINARY_IS_STREAMER_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asStreamer) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestBenchDrainCommitsEveryExample runs a small drain end to end: the
// report has its keys, and every example was committed and predicted.
func TestBenchDrainCommitsEveryExample(t *testing.T) {
	t.Setenv(asStreamer, "1")
	report := filepath.Join(t.TempDir(), "drain.json")
	out := run(t, "bench", "drain", "--examples", "2000", "--timeout", "60s", "--report", report)
	var rep map[string]float64
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench drain printed %q: %v", out, err)
	}
	for _, k := range []string{"examples", "seconds", "examples_per_sec", "p50_ms", "p99_ms", "rss_bytes", "kept_fraction"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("bench drain output lacks %q: %s", k, out)
		}
	}
	if rep["examples"] != 2000 || rep["predictions"] != 2000 {
		t.Errorf("bench drain: %s; want 2000 examples committed and predicted", out)
	}
	if rep["seconds"] <= 0 || rep["rss_bytes"] <= 0 || rep["p50_ms"] > rep["p99_ms"] {
		t.Errorf("bench drain: %s", out)
	}
	var saved map[string]float64
	if b, err := os.ReadFile(report); err != nil || json.Unmarshal(b, &saved) != nil || saved["examples"] != 2000 {
		t.Errorf("--report wrote %q (%v)", b, err)
	}
}
