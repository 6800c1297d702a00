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

	"streamer/brokers"
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
	Window          int       `json:"window"`
}

// Load runs the load benchmark: an embedded cluster in this process,
// the service in a child process (so that its memory is its own), and
// producers writing generated text as fast as the cluster takes it. It
// samples the child's resident memory and scrapes its metrics.
func Load(ctx context.Context, cfg LoadConfig) (LoadReport, error) {
	rep := LoadReport{Window: cfg.Window}
	cluster, err := brokers.StartCluster(brokers.ClusterConfig{Partitions: 4})
	if err != nil {
		return rep, err
	}
	defer cluster.Close()
	sets := append([]string{"kafka.brokers=" + cluster.Addrs()[0], "window.max_examples=" + strconv.Itoa(cfg.Window),
		"log.level=warn", "kafka.partitions=4"}, cfg.Set...)
	svc, err := startChild(cfg.Executable, sets)
	if err != nil {
		return rep, fmt.Errorf("start service: %w", err)
	}
	defer svc.stop()

	var produced atomic.Int64
	prodCtx, stopProducers := context.WithTimeout(ctx, cfg.Duration)
	defer stopProducers()
	var wg sync.WaitGroup
	for p := range max(cfg.Producers, 1) {
		wg.Go(func() { loadProducer(prodCtx, cluster.Addrs(), uint64(p), &produced) })
	}
	start := time.Now()
	samples := sampleRSS(prodCtx, svc.pid())
	wg.Wait()
	rep.Seconds = time.Since(start).Seconds()
	// The producers stop only when prodCtx ends, and so does the sampler:
	// it is joined here, before any return.
	rss := <-samples
	rep.Produced = produced.Load()
	rep.ProducedPerSec = float64(rep.Produced) / rep.Seconds
	m, err := scrape(svc.url("/metrics"))
	if err != nil {
		return rep, err
	}
	rep.Predictions = int64(m["streamer_predictions_published_total"])
	rep.SustainedPerSec = float64(rep.Predictions) / rep.Seconds
	rep.Backlog = rep.Produced - rep.Predictions
	for _, r := range rss {
		rep.PeakRSSMB = max(rep.PeakRSSMB, r)
	}
	for q := 1; q <= 4; q++ {
		if len(rss) > 0 {
			rep.RSSQuartilesMB = append(rep.RSSQuartilesMB, rss[min(len(rss)-1, q*len(rss)/4)])
		}
	}
	return rep, nil
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
// fast as the cluster acknowledges them.
func loadProducer(ctx context.Context, addrs []string, seed uint64, produced *atomic.Int64) {
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, BatchSize: 1000, AllowAutoTopicCreation: true}
	defer w.Close()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: seed})
	for ctx.Err() == nil {
		msgs := make([]kafka.Message, 0, 1100)
		for i := range 1000 {
			d := gen.Next()
			id := fmt.Sprintf("p%d-%s", seed, d.ID)
			v, _ := json.Marshal(map[string]string{"id": id, "text": d.Text})
			msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte(id), Value: v})
			if i%10 == 0 {
				l, _ := json.Marshal(map[string]string{"id": id, "label": d.Label})
				msgs = append(msgs, kafka.Message{Topic: "labels", Key: []byte(id), Value: l})
			}
		}
		if w.WriteMessages(ctx, msgs...) == nil {
			produced.Add(1000)
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
func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
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
