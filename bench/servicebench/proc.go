package servicebench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// selfCPUSeconds is the processor time this process has used so far,
// read as a child's is, or 0 where /proc does not say.
func selfCPUSeconds() float64 {
	s, _ := procCPUSeconds(os.Getpid())
	return s
}

// procCPUSeconds is the processor time process pid has used so far, from
// the utime and stime fields of /proc/pid/stat, in ticks of 1/100 s (the
// kernel's USER_HZ on every Linux architecture Go supports).
func procCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	var ticks float64
	for _, s := range f[11:13] { // fields 14 and 15
		t, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += t
	}
	return ticks / 100, nil
}

// statusKB reads a "kB" field of /proc/pid/status.
func statusKB(pid int, field string) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// sampleRSS reads the resident memory of pid, in MB, every 200ms until ctx
// ends, and returns the samples.
func sampleRSS(ctx context.Context, pid int) []float64 {
	var rss []float64
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if kb, err := statusKB(pid, "VmRSS"); err == nil {
			rss = append(rss, kb/1024)
		}
		select {
		case <-ctx.Done():
			return rss
		case <-tick.C:
		}
	}
}

// scrape reads the unlabeled samples of a Prometheus text endpoint, summing
// the labeled ones by name.
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] += v
		}
	}
	return out, nil
}
