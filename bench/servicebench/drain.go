package servicebench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// DrainConfig describes `streamer bench drain`: a catch-up drain of a topic
// filled before the service starts.
type DrainConfig struct {
	Executable string  // the streamer binary to run
	Examples   int     // examples written before the service starts
	TextFrom   string  // a JSONL file (.gz allowed) whose examples (text or vector) are cycled; "" generates text
	LabelRate  float64 // fraction of the examples that also get a label on the labels topic
	Partitions int     // partitions of the input topics; 0 means 4
	Set        []string
	// Timeout bounds the drain, from the service's start to its last
	// commit; 0 means 10 minutes.
	Timeout time.Duration
	// CPUProfile, when set, is passed to the service's hidden --cpuprofile.
	CPUProfile string
}

// DrainReport is what `streamer bench drain` prints. Latency is the time
// from the service's start to the Kafka timestamp of each prediction (the
// writer stamps a record when it sends it): every example of a pre-filled
// topic has arrived by the start, so this is its arrival-to-publish time.
type DrainReport struct {
	Examples       int     `json:"examples"`
	Seconds        float64 `json:"seconds"`
	ExamplesPerSec float64 `json:"examples_per_sec"`
	P50Ms          float64 `json:"p50_ms"`
	P99Ms          float64 `json:"p99_ms"`
	RSSBytes       int64   `json:"rss_bytes"`
	KeptFraction   float64 `json:"kept_fraction"`
	Predictions    int     `json:"predictions"`
	// Solves is the number of solves the service finished during the
	// drain; ServiceCPUSeconds and HarnessCPUSeconds are the processor
	// time (user and system) of the service and of this process (the
	// embedded broker, mostly) from the service's start to its last
	// commit, to tell a drain bound by the processors from one that waits.
	Solves            int     `json:"solves"`
	ServiceCPUSeconds float64 `json:"service_cpu_seconds"`
	HarnessCPUSeconds float64 `json:"harness_cpu_seconds"`
	// StopSeconds is the time from SIGTERM to the service's exit.
	StopSeconds float64 `json:"stop_seconds"`
}

// Drain fills an embedded broker with cfg.Examples examples, then starts
// the service as a child process and times it from its start until the
// group has committed the end of every input partition.
func Drain(ctx context.Context, cfg DrainConfig) (rep DrainReport, err error) {
	rep.Examples = cfg.Examples
	if cfg.Examples <= 0 {
		return rep, errors.New("examples must be positive")
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	fc, err := fillCluster(ctx, cfg.Partitions, cfg.Set, cfg)
	if err != nil {
		return rep, err
	}
	defer fc.Close()
	sc, conn, sets, topics := fc.config, fc.conn, fc.sets, fc.config.Kafka.Topics

	var extra []string
	if cfg.CPUProfile != "" {
		extra = []string{"--cpuprofile", cfg.CPUProfile}
	}
	harnessCPU := selfCPUSeconds()
	start := time.Now()
	svc, err := startChild(cfg.Executable, sets, extra...)
	if err != nil {
		return rep, fmt.Errorf("start service: %w", err)
	}
	svc.grace = max(svc.grace, sc.Shutdown.Timeout+10*time.Second)
	defer func() {
		if serr := svc.stop(); err == nil && serr != nil {
			err = fmt.Errorf("stop service: %w", serr)
		}
	}()

	if err := waitCommitted(ctx, conn, sc.Kafka.Group, []string{topics.Examples, topics.Labels}, cfg.Timeout, svc); err != nil {
		return rep, err
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.ExamplesPerSec = float64(cfg.Examples) / rep.Seconds
	rep.HarnessCPUSeconds = selfCPUSeconds() - harnessCPU
	if err := rep.readChild(ctx, svc); err != nil {
		return rep, err
	}
	stopping := time.Now()
	if err := svc.stop(); err != nil {
		return rep, fmt.Errorf("stop service: %w", err)
	}
	rep.StopSeconds = time.Since(stopping).Seconds()
	lat, err := fc.publishTimes(ctx, start)
	if err != nil {
		return rep, err
	}
	rep.Predictions = len(lat)
	rep.P50Ms, rep.P99Ms = quantile(lat, 0.50), quantile(lat, 0.99)
	return rep, nil
}

// readChild reads the running service's processor time and peak memory
// from /proc, and its solves and kept fraction from its metrics.
func (rep *DrainReport) readChild(ctx context.Context, svc *child) error {
	if cpu, err := procCPUSeconds(svc.pid()); err == nil {
		rep.ServiceCPUSeconds = cpu
	}
	if kb, err := statusKB(svc.pid(), "VmHWM"); err == nil {
		rep.RSSBytes = int64(kb) * 1024
	}
	m, err := scrape(ctx, svc.url("/metrics"))
	if err != nil {
		return err
	}
	rep.KeptFraction = m["streamer_window_kept_ratio"]
	rep.Solves = int(m["streamer_solve_duration_seconds_count"])
	return nil
}

// quantile is the nearest-rank q-quantile of sorted values; 0 when empty.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
