package online

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/newton"
	"streamer/online/train"
)

// BenchmarkSolveSkipped is a solve tried on a 20,000-row text window
// that holds no labeled example (they all left it), or labels of one
// class only (a stream's start): as a backlog brings one at every
// trigger, it should cost next to nothing beside a solve.
func BenchmarkSolveSkipped(b *testing.B) {
	for _, c := range []struct {
		name  string
		label string // of every fifth row
		want  error
	}{{"no-labels", "", newton.ErrNoLabels}, {"one-class", "pos", train.ErrOneClass}} {
		b.Run(c.name, func(b *testing.B) {
			l, err := NewLearner(LearnerConfig{
				Features: 1 << 16,
				Window:   anngraph.Config{MaxExamples: 20000, K: 5, Seed: 1},
				Params:   train.Params{Algorithm: train.TSVM, Lambda: 1e-3},
			})
			if err != nil {
				b.Fatal(err)
			}
			rows := textRows(20000, 5)
			observeEveryFifth(l, rows, func(labeledRow) string { return c.label })
			for i := 0; b.Loop(); i++ {
				r := rows[i%len(rows)]
				l.Observe(fmt.Sprint("again", i), time.Time{}, r.v, "")
				if _, err := l.Solve(context.Background()); !errors.Is(err, c.want) {
					b.Fatalf("solve: %v, want %v", err, c.want)
				}
			}
		})
	}
}
