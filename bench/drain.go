package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/ingest"
	"streamer/synth"
)

// DrainConfig describes `streamer bench drain`: a catch-up drain of a topic
// filled before the service starts.
type DrainConfig struct {
	Executable string  // the streamer binary to run
	Examples   int     // examples written before the service starts
	TextFrom   string  // a JSONL file (.gz allowed) whose texts are cycled; "" generates text
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

	if err := waitCommitted(ctx, conn, sc.Kafka.Group, []string{topics.Examples, topics.Labels}, cfg.Timeout, svc.exited); err != nil {
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

// drainText is one example's text and, when the source has one, its label.
type drainText struct {
	id, text, label string
}

// drainTexts returns a function giving the i-th example: generated, or the
// texts of a JSONL file cycled, each cycle's ids made distinct.
func drainTexts(path string) (func(i int) drainText, error) {
	if path == "" {
		gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 1})
		return func(int) drainText {
			d := gen.Next()
			return drainText{id: d.ID, text: d.Text, label: d.Label}
		}, nil
	}
	f, err := ingest.OpenDecompressed(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []drainText
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var r struct {
			ID    string          `json:"id"`
			Text  string          `json:"text"`
			Label json.RawMessage `json:"label"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if r.Text == "" {
			continue
		}
		if r.ID == "" {
			r.ID = "line-" + strconv.Itoa(line)
		}
		label := string(r.Label)
		if s, err := strconv.Unquote(label); err == nil {
			label = s
		} else if label == "null" {
			label = ""
		}
		recs = append(recs, drainText{id: r.ID, text: r.Text, label: label})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no record with a text", path)
	}
	return func(i int) drainText {
		r := recs[i%len(recs)]
		if c := i / len(recs); c > 0 {
			r.id += "~" + strconv.Itoa(c)
		}
		return r
	}, nil
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

// benchCluster is an embedded broker with the configuration of the
// service that a harness points at it, and a connection of its own.
type benchCluster struct {
	cluster *embedded.Cluster
	conn    *brokers.Connection
	config  config.Config
	// sets are the --set flags that point a child service at the cluster.
	sets []string
}

// startBenchCluster starts an embedded broker of the given partitions,
// loads the service's configuration from sets (the broker's address,
// warn-level logs and the partitions first, then extra), so that a bad
// --set is refused before anything runs, and creates the input topics
// with the partitions the service expects.
func startBenchCluster(ctx context.Context, partitions int, extra []string) (*benchCluster, error) {
	cluster, err := embedded.Start(embedded.Config{Partitions: partitions})
	if err != nil {
		return nil, fmt.Errorf("start the embedded broker: %w", err)
	}
	bc := &benchCluster{cluster: cluster}
	bc.sets = slices.Clip(append([]string{"kafka.brokers=" + cluster.Addrs()[0],
		"log.level=warn", "kafka.partitions=" + strconv.Itoa(partitions)}, extra...))
	if bc.config, err = config.Load("", bc.sets); err != nil {
		cluster.Close()
		return nil, err
	}
	if bc.conn, err = bc.config.Brokers().Connect(cluster.Addrs()); err != nil {
		cluster.Close()
		return nil, fmt.Errorf("connect to the embedded broker: %w", err)
	}
	topics, n := bc.config.Kafka.Topics, bc.config.Kafka.Partitions
	if err := bc.conn.EnsureTopics(ctx, brokers.Topic{Name: topics.Examples, Partitions: n},
		brokers.Topic{Name: topics.Labels, Partitions: n}); err != nil {
		bc.Close()
		return nil, fmt.Errorf("create the input topics: %w", err)
	}
	return bc, nil
}

// fillCluster starts a benchCluster and fills its input topics as
// fillDrain does with fill.
func fillCluster(ctx context.Context, partitions int, extra []string, fill DrainConfig) (*benchCluster, error) {
	bc, err := startBenchCluster(ctx, partitions, extra)
	if err != nil {
		return nil, err
	}
	topics := bc.config.Kafka.Topics
	if err := fillDrain(ctx, bc.conn, fill, topics.Examples, topics.Labels); err != nil {
		bc.Close()
		return nil, err
	}
	return bc, nil
}

// publishTimes is the package's publishTimes over the service's
// predictions topic, read through a connection of its own: kafka-go's
// transport caches metadata from before the service created the topic.
func (bc *benchCluster) publishTimes(ctx context.Context, start time.Time) ([]float64, error) {
	out, err := bc.config.Brokers().Connect(bc.cluster.Addrs())
	if err != nil {
		return nil, fmt.Errorf("connect to read the predictions: %w", err)
	}
	defer out.Close()
	return publishTimes(ctx, out, bc.config.Kafka.Topics.Predictions, start)
}

// Close closes the connection and stops the broker.
func (bc *benchCluster) Close() {
	bc.conn.Close()
	bc.cluster.Close()
}

// fillDrain writes the examples, and the labels of a LabelRate fraction of
// them spread evenly, and returns once the brokers acknowledged them all.
func fillDrain(ctx context.Context, conn *brokers.Connection, cfg DrainConfig, examples, labels string) error {
	next, err := drainTexts(cfg.TextFrom)
	if err != nil {
		return err
	}
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: 5000, BatchBytes: 16 << 20}
	defer w.Close()
	batch := make([]kafka.Message, 0, 5500)
	for i := range cfg.Examples {
		d := next(i)
		v, _ := json.Marshal(map[string]string{"id": d.id, "text": d.text})
		batch = append(batch, kafka.Message{Topic: examples, Key: []byte(d.id), Value: v})
		// Exactly ⌊n·rate⌋ of the first n examples are labeled.
		if d.label != "" && math.Floor(float64(i+1)*cfg.LabelRate) > math.Floor(float64(i)*cfg.LabelRate) {
			l, _ := json.Marshal(map[string]string{"id": d.id, "label": d.label})
			batch = append(batch, kafka.Message{Topic: labels, Key: []byte(d.id), Value: l})
		}
		if len(batch) >= 5000 || i == cfg.Examples-1 {
			if err := w.WriteMessages(ctx, batch...); err != nil {
				return fmt.Errorf("fill %s: %w", examples, err)
			}
			batch = batch[:0]
		}
	}
	return nil
}

// waitCommitted polls until group has committed the end of every partition
// of topics, the service exits, or timeout passes.
func waitCommitted(ctx context.Context, conn *brokers.Connection, group string, topics []string, timeout time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		done, behind := true, int64(0)
		for _, t := range topics {
			ps, err := conn.Positions(ctx, group, t)
			if err != nil && ctx.Err() == nil {
				return err
			}
			for _, p := range ps {
				if p.End > p.First && p.Committed < p.End {
					done = false
					behind += p.End - max(p.Committed, p.First)
				}
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain: %d records not committed after %v: %w", behind, timeout, ctx.Err())
		case <-exited:
			return errors.New("service exited before the drain ended")
		case <-tick.C:
		}
	}
}

// publishTimes reads the predictions topic and returns, per example (its
// first prediction, should one be published twice), the time from start to
// the prediction's Kafka timestamp, in milliseconds, sorted.
func publishTimes(ctx context.Context, conn *brokers.Connection, topic string, start time.Time) ([]float64, error) {
	parts, err := conn.Partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	ranges, err := conn.Offsets(ctx, topic, parts)
	if err != nil {
		return nil, err
	}
	first := map[string]time.Time{}
	for _, p := range parts {
		r := ranges[p]
		err := conn.ReadRange(ctx, topic, p, r.First, r.End, func(m kafka.Message) error {
			if t, ok := first[string(m.Key)]; !ok || m.Time.Before(t) {
				first[string(m.Key)] = m.Time
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]float64, 0, len(first))
	for _, t := range first {
		out = append(out, float64(t.Sub(start))/float64(time.Millisecond))
	}
	slices.Sort(out)
	return out, nil
}

// quantile is the nearest-rank q-quantile of sorted values; 0 when empty.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// selfCPUSeconds is the processor time this process has used so far.
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
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
