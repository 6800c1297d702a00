package main

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
	"github.com/spf13/cobra"

	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/service"
	"streamer/synth"
)

// httpBenchConfig describes `streamer bench http`.
type httpBenchConfig struct {
	Duration time.Duration // of each phase, single then batch
	Clients  int
	Batch    int // examples per batch request
	Train    int // labeled examples the service learns from first
	Seed     uint64
	Set      []string
}

// httpBenchReport is what `streamer bench http` prints.
type httpBenchReport struct {
	Clients      int              `json:"clients"`
	GOMAXPROCS   int              `json:"gomaxprocs"`
	ModelVersion uint64           `json:"model_version"`
	Window       int              `json:"window"`
	Single       httpPhaseReport  `json:"single"`
	Batch        httpPhaseReport  `json:"batch"`
	Errors       int              `json:"errors"`
	Statuses     map[string]int64 `json:"statuses,omitempty"` // of the failed requests
}

// httpPhaseReport measures one kind of request.
type httpPhaseReport struct {
	BatchSize         int     `json:"batch_size"`
	Seconds           float64 `json:"seconds"`
	Requests          int     `json:"requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	ExamplesPerSecond float64 `json:"examples_per_second"`
	P50Ms             float64 `json:"p50_ms"`
	P99Ms             float64 `json:"p99_ms"`
}

func newBenchHTTPCommand() *cobra.Command {
	var (
		cfg    httpBenchConfig
		report string
	)
	cmd := &cobra.Command{
		Use:   "http",
		Short: "Measure synchronous scoring over POST /v1/predict",
		Long: `http starts an embedded broker and the service in this process, both on
loopback, has the service learn from --train generated text examples (one
in four labeled) until its model is solved on the whole window, then has
--clients concurrent clients send POST /v1/predict for --duration with one
example per request, and for another --duration with --batch examples per
request. It prints requests and examples per second and the p50 and p99
latency of each kind. Clients, service and broker share the machine's cores.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := benchHTTP(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), report, rep)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long each phase (single, then batch) runs")
	f.IntVar(&cfg.Clients, "clients", 4, "concurrent clients")
	f.IntVar(&cfg.Batch, "batch", 100, "examples per batch request (at most limits.max_batch_examples)")
	f.IntVar(&cfg.Train, "train", 4000, "labeled and unlabeled examples the service learns from before the measure")
	f.Uint64Var(&cfg.Seed, "seed", 1, "generator seed")
	f.StringArrayVar(&cfg.Set, "set", nil, "more configuration overrides for the service (key=value)")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	return cmd
}

// benchHTTP runs the benchmark: broker, service, training, two phases.
func benchHTTP(ctx context.Context, cfg httpBenchConfig) (httpBenchReport, error) {
	rep := httpBenchReport{Clients: max(cfg.Clients, 1), GOMAXPROCS: runtime.GOMAXPROCS(0)}
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
func measure(ctx context.Context, url string, bodies []string, size, clients int, d time.Duration, fails *failures) httpPhaseReport {
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

func phaseReport(lat []time.Duration, size int, elapsed time.Duration) httpPhaseReport {
	rep := httpPhaseReport{BatchSize: size, Seconds: elapsed.Seconds(), Requests: len(lat)}
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
