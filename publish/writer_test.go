package publish

import (
	"encoding/json"
	"fmt"
	"testing"

	"streamer/pipeline"
)

// TestEncoderRecordsSurviveGrowth encodes many predictions into one
// encoder, starting with no room, and checks every record afterwards: the
// buffer's growth must not move or overwrite what was returned.
func TestEncoderRecordsSurviveGrowth(t *testing.T) {
	e := NewEncoder(0)
	var keys, values [][]byte
	for i := range 1000 {
		label, prob := "spam", float64(i)/1000
		p := pipeline.Prediction{ID: fmt.Sprintf("doc-%d", i), Label: &label, Prob: &prob,
			Scores: map[string]float64{"ham": -float64(i), "spam": float64(i)}}
		m, err := e.Prediction("predictions", &p)
		if err != nil {
			t.Fatal(err)
		}
		if m.Topic != "predictions" || cap(m.Key) != len(m.Key) || cap(m.Value) != len(m.Value) {
			t.Fatalf("record %d: topic %q, key and value with room beyond them", i, m.Topic)
		}
		keys, values = append(keys, m.Key), append(values, m.Value)
	}
	for i := range keys {
		var p pipeline.Prediction
		if err := json.Unmarshal(values[i], &p); err != nil {
			t.Fatalf("record %d: %v: %s", i, err, values[i])
		}
		if id := fmt.Sprintf("doc-%d", i); string(keys[i]) != id || p.ID != id || p.Scores["spam"] != float64(i) {
			t.Fatalf("record %d: key %q, value %s", i, keys[i], values[i])
		}
	}
}
