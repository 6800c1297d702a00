package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hamba/avro/v2"

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

// TestAvroEncoder: in Avro, a record is the wire format's header with the
// schema id, then the prediction under pipeline.PredictionAvroSchema.
func TestAvroEncoder(t *testing.T) {
	e := NewEncoderOf(0, Format{Avro: true, SchemaID: 258})
	label, prob := "spam", 0.75
	p := pipeline.Prediction{ID: "doc-1", Label: &label, Prob: &prob, Scores: map[string]float64{"spam": 1.5}, Source: pipeline.Source{Topic: "examples", Offset: 9}}
	m, err := e.Prediction("predictions", &p)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Key) != "doc-1" || !bytes.Equal(m.Value[:5], []byte{0, 0, 0, 1, 2}) {
		t.Fatalf("record key %q, header % x", m.Key, m.Value[:5])
	}
	var got struct {
		ID     string             `avro:"id"`
		Label  *string            `avro:"label"`
		Scores map[string]float64 `avro:"scores"`
		Source struct {
			Offset int64 `avro:"offset"`
		} `avro:"source"`
	}
	if err := avro.Unmarshal(avro.MustParse(pipeline.PredictionAvroSchema), m.Value[5:], &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "doc-1" || *got.Label != "spam" || got.Scores["spam"] != 1.5 || got.Source.Offset != 9 {
		t.Fatalf("read back %+v", got)
	}
}
