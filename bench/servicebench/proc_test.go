package servicebench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// TestProcReadings reads this process's processor time, memory and
// resident samples from /proc, as the harnesses read a child's.
func TestProcReadings(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	pid := os.Getpid()
	for deadline := time.Now().Add(10 * time.Second); selfCPUSeconds() < 0.02 && time.Now().Before(deadline); {
		for range 1_000_000 {
		}
	}
	if cpu, err := procCPUSeconds(pid); err != nil || cpu < 0.02 {
		t.Errorf("procCPUSeconds = %v, %v", cpu, err)
	}
	for _, field := range []string{"VmRSS", "VmHWM"} {
		if kb, err := statusKB(pid, field); err != nil || kb <= 0 {
			t.Errorf("statusKB(%s) = %v, %v", field, kb, err)
		}
	}
	if _, err := statusKB(pid, "NoSuchField"); err == nil {
		t.Error("statusKB of a field /proc does not have: no error")
	}
	if _, err := procCPUSeconds(-1); err == nil {
		t.Error("procCPUSeconds of no process: no error")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if rss := sampleRSS(ctx, pid); len(rss) < 2 || rss[0] <= 0 {
		t.Errorf("sampleRSS over half a second: %v", rss)
	}
}

// TestScrape sums the labeled samples of a metric by name, skips comments
// and lines it cannot read, and fails on an endpoint that is not there.
func TestScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# HELP a_total things\n# TYPE a_total counter\n"+
			"a_total{x=\"1\"} 2\na_total{x=\"2\"} 3.5\n"+
			"b 7\n"+
			"c not-a-number\n"+
			"\n")
	}))
	defer srv.Close()
	m, err := scrape(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["a_total"] != 5.5 || m["b"] != 7 {
		t.Errorf("scraped %v, want a_total 5.5 and b 7", m)
	}
	srv.Close()
	if _, err := scrape(t.Context(), srv.URL); err == nil {
		t.Error("scrape of a closed endpoint: no error")
	}
}
