package bench

import (
	"context"
	"testing"

	"streamer/internal/testlevel"
)

// TestReplaySmall replays a few thousand generated examples from the
// embedded broker with a pinned model, then retraining: every record is
// read, and the pinned model scores well above chance.
func TestReplaySmall(t *testing.T) {
	testlevel.Long(t, "replays thousands of examples twice")
	for _, retrain := range []bool{false, true} {
		cfg := ReplayConfig{Examples: 2000, Partitions: 2, Retrain: retrain, Seed: 1}
		rep, err := Replay(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		mode := map[bool]string{false: "pinned", true: "retrain"}[retrain]
		if rep.Examples != 2000 || rep.Partitions != 2 || rep.Mode != mode || rep.Seconds <= 0 || rep.RecordsPerSecond <= 0 || rep.ProduceSeconds <= 0 {
			t.Errorf("%s: report %+v", mode, rep)
		}
		if !retrain && rep.Accuracy < 0.6 {
			t.Errorf("pinned: accuracy %.3f", rep.Accuracy)
		}
		t.Logf("%s: %+v", mode, rep)
	}
}
