package online

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"streamer/anngraph"
)

// BenchmarkSolveWithoutLabels is a solve tried on a 20,000-row text
// window that holds no labeled example (they all left it), as a backlog
// brings one at every trigger: it is skipped, and should cost next to
// nothing beside a solve.
func BenchmarkSolveWithoutLabels(b *testing.B) {
	l, err := NewLearner(LearnerConfig{
		Features: 1 << 16,
		Window:   anngraph.Config{MaxExamples: 20000, K: 5, Seed: 1},
		Params:   Params{Algorithm: TSVM, Lambda: 1e-3},
	})
	if err != nil {
		b.Fatal(err)
	}
	rows := textRows(20000, 5)
	for _, r := range rows {
		l.Observe(r.id, time.Time{}, r.v, "")
	}
	for i := 0; b.Loop(); i++ {
		r := rows[i%len(rows)]
		l.Observe(fmt.Sprint("again", i), time.Time{}, r.v, "")
		if _, err := l.Solve(context.Background()); !errors.Is(err, ErrNoLabels) {
			b.Fatalf("solve of a window without labels: %v", err)
		}
	}
}
