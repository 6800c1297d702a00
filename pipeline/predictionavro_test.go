package pipeline

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// avroPrediction is what hamba's decoder, the reference AppendAvro is held
// to, makes of a prediction under PredictionAvroSchema.
type avroPrediction struct {
	ID           string             `avro:"id"`
	Label        *string            `avro:"label"`
	Scores       map[string]float64 `avro:"scores"`
	Prob         *float64           `avro:"prob"`
	ModelVersion int64              `avro:"model_version"`
	ModelEpoch   int64              `avro:"model_epoch"`
	TS           *time.Time         `avro:"ts"`
	Source       struct {
		Topic     string `avro:"topic"`
		Partition int32  `avro:"partition"`
		Offset    int64  `avro:"offset"`
	} `avro:"source"`
	Reason *string `avro:"reason"`
}

func TestPredictionAvro(t *testing.T) {
	schema := avro.MustParse(PredictionAvroSchema)
	r := rand.New(rand.NewPCG(5, 6))
	valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	for range 2000 {
		p := randomPrediction(r)
		p.ModelVersion >>= 1
		p.ModelEpoch >>= 1
		if r.IntN(3) == 0 {
			p.Reason = randomString(r)
		}
		// Classes are UTF-8 (the decoder sees to it): two names that are
		// not could become one.
		scores := map[string]float64{}
		for c, x := range p.Scores {
			scores[valid(c)] = x
		}
		p.Scores = scores
		b, err := p.AppendAvro(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got avroPrediction
		rd := avro.NewReader(nil, 0).Reset(b)
		if rd.ReadVal(schema, &got); rd.Error != nil {
			t.Fatalf("hamba cannot read %+v: %v", p, rd.Error)
		}
		if rd.Peek(); rd.Error == nil {
			t.Fatalf("bytes left after %+v", got)
		}
		switch {
		case got.ID != valid(p.ID), got.Source.Topic != valid(p.Source.Topic),
			int(got.Source.Partition) != p.Source.Partition, got.Source.Offset != p.Source.Offset,
			uint64(got.ModelVersion) != p.ModelVersion, uint64(got.ModelEpoch) != p.ModelEpoch:
			t.Fatalf("read back %+v from %+v", got, p)
		case (got.Label == nil) != (p.Label == nil) || p.Label != nil && *got.Label != valid(*p.Label):
			t.Fatalf("label %v, want %v", got.Label, p.Label)
		case (got.Prob == nil) != (p.Prob == nil) || p.Prob != nil && math.Float64bits(*got.Prob) != math.Float64bits(*p.Prob):
			t.Fatalf("prob %v, want %v", got.Prob, p.Prob)
		case (got.TS == nil) != p.TS.IsZero() || got.TS != nil && got.TS.UnixMilli() != p.TS.UnixMilli():
			t.Fatalf("ts %v, want %v", got.TS, p.TS)
		case (got.Reason == nil) != (p.Reason == "") || got.Reason != nil && *got.Reason != valid(p.Reason):
			t.Fatalf("reason %v, want %q", got.Reason, p.Reason)
		case len(got.Scores) != len(p.Scores):
			t.Fatalf("scores %v, want %v", got.Scores, p.Scores)
		}
		for c, x := range p.Scores {
			if math.Float64bits(got.Scores[c]) != math.Float64bits(x) {
				t.Fatalf("score of %q: %v, want %v", c, got.Scores[c], x)
			}
		}
	}
}

func TestPredictionAvroRefusesNonFinite(t *testing.T) {
	nan := math.NaN()
	for _, p := range []Prediction{
		{ID: "a", Scores: map[string]float64{"x": math.Inf(1)}},
		{ID: "a", Scores: map[string]float64{}, Prob: &nan},
	} {
		if _, err := p.AppendAvro(nil); err == nil {
			t.Fatalf("%+v encoded", p)
		}
	}
}

// TestPredictionAvroSchemaDocumented: docs/INPUT.md and
// configs/streamer.yaml show the schema the predictions are written under.
func TestPredictionAvroSchemaDocumented(t *testing.T) {
	want := avro.MustParse(PredictionAvroSchema).String()
	doc, err := os.ReadFile("../docs/INPUT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "```json\n")
	block, _, _ = strings.Cut(block, "```")
	if got, err := avro.Parse(block); err != nil || got.String() != want {
		t.Errorf("docs/INPUT.md shows %v (%v), want %s", got, err, want)
	}
	conf, err := os.ReadFile("../configs/streamer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, output, _ := strings.Cut(string(conf), "\noutput:\n")
	var schema strings.Builder
	for _, line := range strings.Split(output, "\n") {
		if line != "" && line[0] != ' ' && line[0] != '#' {
			break // the next section
		}
		if s, ok := strings.CutPrefix(line, "  #   "); ok {
			schema.WriteString(s)
		}
	}
	if got, err := avro.Parse(schema.String()); err != nil || got.String() != want {
		t.Errorf("configs/streamer.yaml shows %v (%v), want %s", got, err, want)
	}
}
