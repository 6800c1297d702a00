package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/synth"
)

// LoadConfig describes `streamer bench load`: a producer going as fast as it
// can against a `streamer run` process.
type LoadConfig struct {
	Executable string        // the streamer binary to run
	Duration   time.Duration // how long the producer runs
	Producers  int           // concurrent producers
	Window     int           // window.max_examples of the service
	Set        []string      // more --set overrides for the service
	// MaxBacklog holds the producers back while more examples than this
	// are written but not yet predicted; 0 leaves them unbounded. The
	// embedded broker keeps the backlog in this process's memory, so
	// without a bound it grows with every second of the run.
	MaxBacklog int64
}

// LoadReport is what `streamer bench load` prints.
type LoadReport struct {
	Produced        int64     `json:"produced"`
	Predictions     int64     `json:"predictions"`
	Seconds         float64   `json:"seconds"`
	ProducedPerSec  float64   `json:"produced_per_sec"`
	SustainedPerSec float64   `json:"sustained_examples_per_sec"`
	PeakRSSMB       float64   `json:"peak_rss_mb"`
	RSSQuartilesMB  []float64 `json:"rss_mb_at_quarters"`
	Backlog         int64     `json:"backlog"`
	// LabelsDropped are labels that waited for their example longer than
	// join.pending_labels allowed (streamer_labels_dropped_total).
	LabelsDropped int64   `json:"labels_dropped"`
	MaxBacklog    int64   `json:"max_backlog"`
	HeldSeconds   float64 `json:"producers_held_seconds"`
	// HarnessPeakRSSMB is this process's peak memory: the embedded
	// broker's records and the producers.
	HarnessPeakRSSMB float64 `json:"harness_peak_rss_mb"`
	Window           int     `json:"window"`
}

// Load runs the load benchmark: an embedded cluster in this process,
// the service in a child process (so that its memory is its own), and
// producers writing generated text as fast as the cluster takes it, held
// back by MaxBacklog. It samples the child's resident memory and scrapes
// its metrics; the cluster drops what the service has read (trim).
func Load(ctx context.Context, cfg LoadConfig) (LoadReport, error) {
	rep := LoadReport{Window: cfg.Window, MaxBacklog: cfg.MaxBacklog}
	bc, err := startBenchCluster(ctx, 4, append([]string{"window.max_examples=" + strconv.Itoa(cfg.Window)}, cfg.Set...))
	if err != nil {
		return rep, err
	}
	defer bc.Close()
	svc, err := startChild(cfg.Executable, bc.sets)
	if err != nil {
		return rep, fmt.Errorf("start service: %w", err)
	}
	defer svc.stop()

	backlog := &backlogCap{max: cfg.MaxBacklog}
	prodCtx, stopProducers := context.WithTimeout(ctx, cfg.Duration)
	defer stopProducers()
	var wg sync.WaitGroup
	if backlog.max > 0 {
		wg.Go(func() { backlog.follow(prodCtx, svc.url("/metrics")) })
	}
	wg.Go(func() { bc.trim(prodCtx) })
	topics := bc.config.Kafka.Topics
	for p := range max(cfg.Producers, 1) {
		wg.Go(func() { loadProducer(prodCtx, bc.cluster.Addrs(), topics.Examples, topics.Labels, uint64(p), backlog) })
	}
	start := time.Now()
	samples := sampleRSS(prodCtx, svc.pid())
	wg.Wait()
	rep.Seconds = time.Since(start).Seconds()
	// The producers stop only when prodCtx ends, and so does the sampler:
	// it is joined here, before any return.
	rep.addRSS(<-samples)
	rep.Produced = backlog.produced.Load()
	rep.HeldSeconds = time.Duration(backlog.held.Load()).Seconds()
	rep.ProducedPerSec = float64(rep.Produced) / rep.Seconds
	if kb, err := statusKB(os.Getpid(), "VmHWM"); err == nil {
		rep.HarnessPeakRSSMB = kb / 1024
	}
	m, err := scrape(ctx, svc.url("/metrics"))
	if err != nil {
		return rep, err
	}
	rep.Predictions = int64(m["streamer_predictions_published_total"])
	rep.SustainedPerSec = float64(rep.Predictions) / rep.Seconds
	rep.Backlog = rep.Produced - rep.Predictions
	rep.LabelsDropped = int64(m["streamer_labels_dropped_total"])
	return rep, nil
}

// addRSS sets the peak and the quarters of the service's resident memory
// from its samples.
func (rep *LoadReport) addRSS(rss []float64) {
	for _, r := range rss {
		rep.PeakRSSMB = max(rep.PeakRSSMB, r)
	}
	for q := 1; q <= 4; q++ {
		if len(rss) > 0 {
			rep.RSSQuartilesMB = append(rep.RSSQuartilesMB, rss[min(len(rss)-1, q*len(rss)/4)])
		}
	}
}

func freeLocalPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// loadProducer writes generated examples, with a tenth of their labels, as
// fast as the cluster acknowledges them and backlog lets it.
func loadProducer(ctx context.Context, addrs []string, examples, labels string, seed uint64, backlog *backlogCap) {
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, BatchSize: 1000, AllowAutoTopicCreation: true}
	defer w.Close()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: seed})
	for backlog.wait(ctx) {
		msgs := make([]kafka.Message, 0, 1100)
		for i := range 1000 {
			d := gen.Next()
			id := fmt.Sprintf("p%d-%s", seed, d.ID)
			v, _ := json.Marshal(map[string]string{"id": id, "text": d.Text})
			msgs = append(msgs, kafka.Message{Topic: examples, Key: []byte(id), Value: v})
			if i%10 == 0 {
				l, _ := json.Marshal(map[string]string{"id": id, "label": d.Label})
				msgs = append(msgs, kafka.Message{Topic: labels, Key: []byte(id), Value: l})
			}
		}
		if w.WriteMessages(ctx, msgs...) == nil {
			backlog.produced.Add(1000)
		}
	}
}

// trimEvery is how often trim drops what the service has read.
const trimEvery = time.Second

// trim does, until ctx ends, what a broker's retention would: every
// trimEvery it deletes the input records below the service's committed
// offsets and every prediction published, which nobody reads here. The
// embedded broker keeps its records in this process's memory, so without
// it that memory grows with every record produced. A failed round is
// tried again at the next.
func (bc *benchCluster) trim(ctx context.Context) {
	tick := time.NewTicker(trimEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		bc.trimOnce(ctx)
	}
}

// trimOnce deletes what trim deletes, once; it stops at the first error.
func (bc *benchCluster) trimOnce(ctx context.Context) error {
	topics, group := bc.config.Kafka.Topics, bc.config.Kafka.Group
	for _, topic := range []string{topics.Examples, topics.Labels} {
		ps, err := bc.conn.Positions(ctx, group, topic)
		if err != nil {
			return fmt.Errorf("trim %s: %w", topic, err)
		}
		for _, p := range ps {
			if p.Committed <= p.First {
				continue
			}
			if err := bc.cluster.DeleteRecords(topic, int32(p.Partition), p.Committed); err != nil {
				return fmt.Errorf("trim %s/%d to %d: %w", topic, p.Partition, p.Committed, err)
			}
		}
	}
	// From the cluster itself: the connection's transport caches metadata
	// from before the service created the topic.
	for _, pi := range bc.cluster.PartitionInfos(topics.Predictions) {
		if err := bc.cluster.DeleteRecords(topics.Predictions, pi.Partition, -1); err != nil {
			return fmt.Errorf("trim %s/%d: %w", topics.Predictions, pi.Partition, err)
		}
	}
	return nil
}

// backlogCap counts the examples the producers wrote and those the service
// predicted, and holds the producers back while the difference is above max.
type backlogCap struct {
	max       int64        // 0: no bound
	produced  atomic.Int64 // examples written
	predicted atomic.Int64 // examples predicted, as last scraped
	held      atomic.Int64 // nanoseconds the producers spent held back
}

// backlogPoll is how often follow scrapes the service and wait looks again.
const backlogPoll = 100 * time.Millisecond

// wait returns once the backlog is at most max, true unless ctx ended first.
func (b *backlogCap) wait(ctx context.Context) bool {
	if b.max <= 0 || b.produced.Load()-b.predicted.Load() <= b.max {
		return ctx.Err() == nil
	}
	start := time.Now()
	defer func() { b.held.Add(int64(time.Since(start))) }()
	tick := time.NewTicker(backlogPoll)
	defer tick.Stop()
	for b.produced.Load()-b.predicted.Load() > b.max {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return ctx.Err() == nil
}

// follow scrapes the service's predictions from its metrics at url until
// ctx ends; a failed scrape keeps the last count, so the producers wait.
func (b *backlogCap) follow(ctx context.Context, url string) {
	tick := time.NewTicker(backlogPoll)
	defer tick.Stop()
	for {
		if m, err := scrape(ctx, url); err == nil {
			b.predicted.Store(int64(m["streamer_predictions_published_total"]))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sampleRSS reads the resident memory of pid, in MB, every 200ms until ctx
// ends, and then sends the samples.
func sampleRSS(ctx context.Context, pid int) <-chan []float64 {
	out := make(chan []float64, 1)
	go func() {
		var rss []float64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb, err := statusKB(pid, "VmRSS"); err == nil {
				rss = append(rss, kb/1024)
			}
			select {
			case <-ctx.Done():
				out <- rss
				return
			case <-tick.C:
			}
		}
	}()
	return out
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
