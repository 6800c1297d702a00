package main

import (
	"encoding/json"
	"testing"

	"streamer/bench/servicebench"
)

// TestBenchHTTPPrintsOneLine runs a short bench http: a model is learned,
// both kinds of request are answered, none fails.
func TestBenchHTTPPrintsOneLine(t *testing.T) {
	out := run(t, "bench", "http", "--duration", "300ms", "--clients", "2", "--batch", "5", "--train", "400",
		"--set", "window.max_examples=400", "--set", "features.dim=16384")
	var rep servicebench.HTTPReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench http printed %q: %v", out, err)
	}
	if rep.ModelVersion == 0 || rep.Single.Requests == 0 || rep.Batch.Requests == 0 || rep.Batch.BatchSize != 5 || rep.Errors != 0 {
		t.Fatalf("bench http: %s", out)
	}
}
