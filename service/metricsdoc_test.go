package service

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOperatingListsEveryMetric: every metric the service's code names
// (a string "streamer_…" in a file of this package or the packages below
// it, tests aside) is in docs/OPERATING.md's table, without its prefix,
// so that an operator finds each one there.
func TestOperatingListsEveryMetric(t *testing.T) {
	doc, err := os.ReadFile("../docs/OPERATING.md")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`"streamer_([a-z_]+)"`)
	found := map[string]string{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range names.FindAllStringSubmatch(string(src), -1) {
			found[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 40 {
		t.Fatalf("found %d metric names in the code, want the service's 40-odd", len(found))
	}
	for name, path := range found {
		if !strings.Contains(string(doc), "`"+name) {
			t.Errorf("metric streamer_%s (%s) is not in docs/OPERATING.md", name, path)
		}
	}
}
