package servicebench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
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
	var rss []float64
	wg.Go(func() { rss = sampleRSS(prodCtx, svc.pid()) })
	// Every goroutine above ends when prodCtx does.
	wg.Wait()
	rep.Seconds = time.Since(start).Seconds()
	rep.addRSS(rss)
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
