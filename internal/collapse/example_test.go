package collapse_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"streamer/internal/collapse"
)

// A retry loop's warning, every 250ms for 4s: the first is written, then
// one per step (1s, then 2s), each with the number it stands for; Flush
// writes the last ones at the end of the run.
func Example() {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	text := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.String("at", a.Value.Time().Sub(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)).String())
		}
		return a
	}})
	h := collapse.NewHandler(text, collapse.Options{Now: func() time.Time { return now }})
	for range 16 {
		r := slog.NewRecord(now, slog.LevelWarn, "kafka operation failed; retrying", 0)
		_ = h.Handle(context.Background(), r)
		now = now.Add(250 * time.Millisecond)
	}
	h.Flush(context.Background())
	// Output:
	// at=0s level=WARN msg="kafka operation failed; retrying"
	// at=1s level=WARN msg="kafka operation failed; retrying" repeated=3
	// at=3s level=WARN msg="kafka operation failed; retrying" repeated=7
	// at=3.75s level=WARN msg="kafka operation failed; retrying" repeated=2
}
