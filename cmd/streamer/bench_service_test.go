package main

import (
	"encoding/json"
	"testing"

	"streamer/internal/testlevel"
)

// TestBenchLoadRunsTheService runs a short load: the producers wrote, the
// service predicted, and its memory was sampled at each quarter.
func TestBenchLoadRunsTheService(t *testing.T) {
	testlevel.Long(t, "runs the service as a child process for seconds")
	t.Setenv(asStreamer, "1")
	out := run(t, "bench", "load", "--duration", "3s", "--producers", "1", "--window", "500", "--max-backlog", "5000",
		"--set", "features.dim=16384")
	var rep struct {
		Produced, Predictions, Backlog int64
		PeakRSSMB                      float64   `json:"peak_rss_mb"`
		Quarters                       []float64 `json:"rss_mb_at_quarters"`
		Window                         int       `json:"window"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench load printed %q: %v", out, err)
	}
	if rep.Produced == 0 || rep.Predictions == 0 || rep.Backlog != rep.Produced-rep.Predictions ||
		rep.PeakRSSMB <= 0 || len(rep.Quarters) != 4 || rep.Window != 500 {
		t.Errorf("bench load: %s", out)
	}
}

// TestBenchScaleRunsEveryPhase runs a small scale: both takeovers, one
// run of one scorer and a rolling restart of one, each with its figures.
func TestBenchScaleRunsEveryPhase(t *testing.T) {
	testlevel.Long(t, "runs learners and scorers as child processes for half a minute")
	t.Setenv(asStreamer, "1")
	out := run(t, "bench", "scale", "--examples", "2000", "--partitions", "2", "--scorers", "1",
		"--rolling-scorers", "1", "--rolling-rate", "100", "--timeout", "2m",
		"--set", "window.max_examples=500", "--set", "features.dim=16384")
	var rep struct {
		Examples int `json:"examples"`
		Runs     []struct {
			Scorers        int     `json:"scorers"`
			ExamplesPerSec float64 `json:"examples_per_sec"`
		} `json:"runs"`
		Kill    float64 `json:"takeover_after_kill_seconds"`
		Stop    float64 `json:"takeover_after_stop_seconds"`
		Rolling struct {
			Scorers int     `json:"scorers"`
			Seconds float64 `json:"seconds"`
		} `json:"rolling_restart"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench scale printed %q: %v", out, err)
	}
	if rep.Examples != 2000 || len(rep.Runs) != 1 || rep.Runs[0].Scorers != 1 || rep.Runs[0].ExamplesPerSec <= 0 ||
		rep.Kill <= 0 || rep.Stop <= 0 || rep.Rolling.Scorers != 1 || rep.Rolling.Seconds <= 0 {
		t.Errorf("bench scale: %s", out)
	}
}
