package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"streamer/pipeline"
	"streamer/synth"
)

// kcat runs the kcat command line client against the cluster at broker.
func kcat(t *testing.T, ctx context.Context, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestServiceWithKcat drives the service the way a user would, with an
// independent client (librdkafka's kcat): examples and labels produced with
// kcat, predictions consumed with kcat.
func TestServiceWithKcat(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kcat"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kcat is not installed; .ci/run installs it")
		}
		t.Skip("kcat is not installed (make test installs it)")
	}
	cluster := startCluster(t)
	broker := cluster.Addrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := testConfig(t, cluster.Addrs(), "kafka.partitions=1")
	svc, stop := runService(t, cfg)
	<-svc.Started()

	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 7, Topics: 2})
	var examples, labels bytes.Buffer
	const n = 300
	ids := map[string]bool{}
	for i := range n {
		d := gen.Next()
		v, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text})
		fmt.Fprintf(&examples, "%s\t%s\n", d.ID, v)
		ids[d.ID] = true
		if i%5 == 0 {
			l, _ := json.Marshal(map[string]string{"id": d.ID, "label": d.Label})
			fmt.Fprintf(&labels, "%s\t%s\n", d.ID, l)
		}
	}
	fmt.Fprintf(&examples, "bad\t{\"id\": \"bad\", \"text\": 5}\n")
	kcat(t, ctx, examples.Bytes(), "-P", "-b", broker, "-t", "examples", "-K", "\t")
	kcat(t, ctx, labels.Bytes(), "-P", "-b", broker, "-t", "labels", "-K", "\t")
	waitFor(t, "every example consumed", time.Minute, func() bool { return svc.Status().Pipeline.Examples >= n })
	waitFor(t, "the dead letter", 30*time.Second, func() bool { return svc.Status().DeadLetters >= 1 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	out := kcat(t, ctx, nil, "-C", "-b", broker, "-t", "predictions", "-o", "beginning", "-e", "-q", "-f", "%k\t%s\n")
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		key, value, _ := strings.Cut(line, "\t")
		var p pipeline.Prediction
		if err := json.Unmarshal([]byte(value), &p); err != nil {
			t.Fatalf("prediction %q: %v", line, err)
		}
		if key != p.ID {
			t.Fatalf("prediction keyed %q for %q", key, p.ID)
		}
		got[p.ID] = true
	}
	for id := range ids {
		if !got[id] {
			t.Fatalf("no prediction for %s (of %d predictions)", id, len(got))
		}
	}
	dlq := kcat(t, ctx, nil, "-C", "-b", broker, "-t", "examples-dlq", "-o", "beginning", "-e", "-q", "-f", "%k %h\n")
	if !strings.Contains(string(dlq), "bad") || !strings.Contains(string(dlq), "dlq-reason=wrong_type") {
		t.Fatalf("dead letter not as expected: %q", dlq)
	}
}
