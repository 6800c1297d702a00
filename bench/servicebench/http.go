package servicebench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/service"
	"streamer/synth"
)

// HTTPConfig describes `streamer bench http`.
type HTTPConfig struct {
	Duration time.Duration // of each phase, single then batch
	Clients  int
	Batch    int // examples per batch request
	Train    int // labeled examples the service learns from first
	Seed     uint64
	Set      []string
}

// HTTPReport is what `streamer bench http` prints.
type HTTPReport struct {
	Clients      int              `json:"clients"`
	GOMAXPROCS   int              `json:"gomaxprocs"`
	ModelVersion uint64           `json:"model_version"`
	Window       int              `json:"window"`
	Single       HTTPPhase        `json:"single"`
	Batch        HTTPPhase        `json:"batch"`
	Errors       int              `json:"errors"`
	Statuses     map[string]int64 `json:"statuses,omitempty"` // of the failed requests
}

// HTTPPhase is the measure of one kind of request.
type HTTPPhase struct {
	BatchSize         int     `json:"batch_size"`
	Seconds           float64 `json:"seconds"`
	Requests          int     `json:"requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	ExamplesPerSecond float64 `json:"examples_per_second"`
	P50Ms             float64 `json:"p50_ms"`
	P99Ms             float64 `json:"p99_ms"`
}

// HTTP runs the http benchmark: an embedded broker and the service in
// this process, the training, then the two phases, single examples and
// batches.
func HTTP(ctx context.Context, cfg HTTPConfig) (HTTPReport, error) {
	rep := HTTPReport{Clients: max(cfg.Clients, 1), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	cluster, err := embedded.Start(embedded.Config{Partitions: 1})
	if err != nil {
		return rep, err
	}
	defer cluster.Close()
	sc, err := config.Load("", append([]string{"http.listen=127.0.0.1:0", "log.level=warn", "schedule.solve_interval=1s"}, cfg.Set...))
	if err != nil {
		return rep, err
	}
	if cfg.Batch < 1 || cfg.Batch > sc.Limits.MaxBatchExamples {
		return rep, fmt.Errorf("--batch %d: want 1 to limits.max_batch_examples %d", cfg.Batch, sc.Limits.MaxBatchExamples)
	}
	sc.Kafka.Brokers = cluster.Addrs()
	svc, err := service.New(sc, nil)
	if err != nil {
		return rep, err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	exited := make(chan error, 1)
	wg.Go(func() { exited <- svc.Run(runCtx) })
	defer func() { stop(); wg.Wait() }()

	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: cfg.Seed})
	if err := trainService(ctx, cluster.Addrs(), gen, cfg.Train); err != nil {
		return rep, err
	}
	if err := waitSolved(ctx, svc, exited, cfg.Train, 3*time.Minute); err != nil {
		return rep, err
	}
	st := svc.Pipeline().Stats()
	rep.ModelVersion, rep.Window = st.ModelVersion, st.Window

	bodies := requestBodies(gen, 1000)
	url := "http://" + svc.HTTPAddr() + "/v1/predict"
	var fails failures
	rep.Single = measure(ctx, url, bodies, 1, rep.Clients, cfg.Duration, &fails)
	rep.Batch = measure(ctx, url, bodies, cfg.Batch, rep.Clients, cfg.Duration, &fails)
	rep.Errors, rep.Statuses = fails.count()
	return rep, nil
}

// trainService produces n generated examples, one in four with its label.
func trainService(ctx context.Context, addrs []string, gen *synth.TextStream, n int) error {
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: "examples", Balancer: &kafka.Hash{}, Transport: tr,
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: 1000, AllowAutoTopicCreation: true}
	defer w.Close()
	msgs := make([]kafka.Message, 0, n)
	for i := range n {
		d := gen.Next()
		rec := map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text}
		if i%4 == 0 {
			rec["label"] = d.Label
		}
		v, _ := json.Marshal(rec)
		msgs = append(msgs, kafka.Message{Key: []byte(d.ID), Value: v})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("produce the training examples: %w", err)
	}
	return nil
}

// waitSolved polls until the service has read n examples and its model is
// the solution of its window, so that no solve runs during the measure.
func waitSolved(ctx context.Context, svc *service.Service, exited <-chan error, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		st := svc.Pipeline().Stats()
		if st.Examples >= int64(n) && st.ModelVersion > 0 && svc.Pipeline().Progress().Solved {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no model solved on the %d training examples within %s (read %d, model version %d)", n, timeout, st.Examples, st.ModelVersion)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exited:
			if err == nil {
				err = errors.New("service run returned without an error")
			}
			return fmt.Errorf("the service stopped before it had a model: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// requestBodies returns n more generated examples, unlabeled, as JSON.
func requestBodies(gen *synth.TextStream, n int) []string {
	out := make([]string, n)
	for i := range out {
		d := gen.Next()
		v, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text})
		out[i] = string(v)
	}
	return out
}

// failures counts the requests that did not get a 200, by status.
type failures struct {
	mu       sync.Mutex
	statuses map[string]int64
}

func (f *failures) add(status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.statuses == nil {
		f.statuses = map[string]int64{}
	}
	f.statuses[status]++
}

func (f *failures) count() (int, map[string]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.statuses {
		n += int(c)
	}
	return n, f.statuses
}

// measure has clients send requests of size examples each (a bare example
// when size is 1, else an array) for d, and reports rates and latencies of
// the requests answered 200.
func measure(ctx context.Context, url string, bodies []string, size, clients int, d time.Duration, fails *failures) HTTPPhase {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	defer client.CloseIdleConnections()
	phaseCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	latencies := make([][]time.Duration, clients)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c * size; phaseCtx.Err() == nil; i += clients * size {
				body := requestBody(bodies, i, size)
				t0 := time.Now()
				if status := send(phaseCtx, client, url, body); status != "" {
					if phaseCtx.Err() == nil {
						fails.add(status)
					}
					continue
				}
				latencies[c] = append(latencies[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	return phaseReport(slices.Concat(latencies...), size, time.Since(start))
}

// requestBody returns examples i.. of bodies, size of them, cycling.
func requestBody(bodies []string, i, size int) string {
	if size == 1 {
		return bodies[i%len(bodies)]
	}
	var b strings.Builder
	b.WriteByte('[')
	for k := range size {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(bodies[(i+k)%len(bodies)])
	}
	b.WriteByte(']')
	return b.String()
}

// send posts body and returns "" on a 200, else what went wrong.
func send(ctx context.Context, client *http.Client, url, body string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return "request"
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "transport"
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return "transport"
	}
	if resp.StatusCode != http.StatusOK {
		return resp.Status
	}
	return ""
}

func phaseReport(lat []time.Duration, size int, elapsed time.Duration) HTTPPhase {
	rep := HTTPPhase{BatchSize: size, Seconds: elapsed.Seconds(), Requests: len(lat)}
	if len(lat) == 0 {
		return rep
	}
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
	rep.RequestsPerSecond = float64(len(lat)) / elapsed.Seconds()
	rep.ExamplesPerSecond = rep.RequestsPerSecond * float64(size)
	rep.P50Ms, rep.P99Ms = ms(0.5), ms(0.99)
	return rep
}
