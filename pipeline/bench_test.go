package pipeline

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/online/train"
	"streamer/synth"
)

// BenchmarkExample measures the per-example work of the core loop (decode,
// score, window insert, join), solves excluded, with a model in force.
func BenchmarkExample(b *testing.B) {
	for _, algo := range []train.Algorithm{train.TSVM, train.LapSVM} {
		b.Run(string(algo), func(b *testing.B) {
			p, err := New(Config{
				Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 18}},
				Learner: online.LearnerConfig{Features: 1 << 18, Window: anngraph.Config{MaxExamples: 20000},
					Params: train.Params{Algorithm: algo, LambdaI: lambdaI(algo)}, SolveExamples: 1 << 30, SolveLabels: 1 << 30},
			})
			if err != nil {
				b.Fatal(err)
			}
			gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 1})
			raw := make([][]byte, 50000)
			for i := range raw {
				d := gen.Next()
				m := map[string]string{"id": d.ID, "text": d.Text}
				if i < 200 {
					m["label"] = d.Label
				}
				raw[i], _ = json.Marshal(m)
			}
			for i := range 1000 {
				ex, _ := p.DecodeExample(raw[i], time.Time{})
				p.Example(ex, Source{})
			}
			if _, err := p.Solve(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			i := 1000
			for b.Loop() {
				ex, err := p.DecodeExample(raw[i%len(raw)], time.Time{})
				if err != nil {
					b.Fatal(err)
				}
				ex.ID = ex.ID + "-" + string(rune('a'+i/len(raw)%26))
				if _, err := p.Example(ex, Source{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "examples/s")
		})
	}
}

func lambdaI(a train.Algorithm) float64 {
	if a == train.LapSVM {
		return 1
	}
	return 0
}
