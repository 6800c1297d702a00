package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamer/internal/testlevel"
)

// TestGenerateWritesStreamsEvalReads: generate writes the same stream for
// the same seed, in the example schema that eval reads, and refuses
// impossible flags.
func TestGenerateWritesStreamsEvalReads(t *testing.T) {
	testlevel.Long(t, "evaluates two generated streams, slow under the race detector")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"clusters", "--rows", "300", "--classes", "3", "--per-class", "2", "--dim", "5"},
		{"glyphs", "--rows", "300", "--deform", "0.5"},
		{"drift", "--kind", "swap", "--rows", "300"},
		{"drift", "--kind", "rotate", "--rows", "300", "--noise", "0.05"},
	} {
		path := filepath.Join(dir, strings.Join(args[:min(3, len(args))], "-")+".jsonl")
		run(t, append([]string{"generate", "--out", path}, args...)...)
		again := run(t, append([]string{"generate"}, args...)...)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, []byte(again)) {
			t.Fatalf("generate %s: the file and standard output differ", args[0])
		}
		if n := strings.Count(again, "\n"); n != 300 {
			t.Fatalf("generate %s: %d lines, want 300", args[0], n)
		}
		out := run(t, "eval", "--data", path, "--label-rate", "0.2", "--label-delay", "10", "--quiet")
		var rep struct {
			Examples   int `json:"examples"`
			BadRecords int `json:"bad_records"`
		}
		if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &rep); err != nil {
			t.Fatalf("eval on generate %s printed %q: %v", args[0], out, err)
		}
		if rep.Examples != 300 || rep.BadRecords != 0 {
			t.Errorf("eval on generate %s: %d examples, %d bad records; want 300 and 0", args[0], rep.Examples, rep.BadRecords)
		}
	}
	for _, args := range [][]string{
		{"generate", "clusters", "--classes", "1"},
		{"generate", "glyphs", "--deform", "0"},
		{"generate", "drift", "--kind", "turn"},
		{"generate", "drift", "--kind", "shift", "--change", "1"},
	} {
		if _, err := runErr(args...); err == nil {
			t.Errorf("streamer %s: no error", strings.Join(args, " "))
		}
	}
}
