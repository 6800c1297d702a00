package pipeline

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
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
	Reason      *string          `avro:"reason"`
	Review      bool             `avro:"review"`
	Explanation *avroExplanation `avro:"explanation"`
}

type avroExplanation struct {
	Class string  `avro:"class"`
	Score float64 `avro:"score"`
	Bias  float64 `avro:"bias"`
	Space string  `avro:"space"`
	Terms []struct {
		Index        int32    `avro:"index"`
		Names        []string `avro:"names"`
		Value        float64  `avro:"value"`
		Contribution float64  `avro:"contribution"`
	} `avro:"terms"`
	Rest       float64 `avro:"rest"`
	Neighbours []struct {
		ID         string  `avro:"id"`
		Label      string  `avro:"label"`
		Similarity float64 `avro:"similarity"`
	} `avro:"neighbours"`
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
		case got.Review != p.Review:
			t.Fatalf("review %v, want %v", got.Review, p.Review)
		}
		checkAvroExplanation(t, got.Explanation, p.Explanation)
		for c, x := range p.Scores {
			if math.Float64bits(got.Scores[c]) != math.Float64bits(x) {
				t.Fatalf("score of %q: %v, want %v", c, got.Scores[c], x)
			}
		}
	}
}

// checkAvroExplanation fails t unless got, decoded by hamba, is want.
func checkAvroExplanation(t *testing.T, got *avroExplanation, want *Explanation) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("explanation %+v, want %+v", got, want)
	}
	if want == nil {
		return
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	if got.Class != want.Class || got.Space != want.Space || !same(got.Score, want.Score) ||
		!same(got.Bias, want.Bias) || !same(got.Rest, want.Rest) ||
		len(got.Terms) != len(want.Terms) || len(got.Neighbours) != len(want.Neighbours) {
		t.Fatalf("explanation %+v, want %+v", got, want)
	}
	for i, w := range want.Terms {
		g := got.Terms[i]
		if g.Index != w.Index || !slices.Equal(g.Names, w.Names) || !same(g.Value, w.Value) || !same(g.Contribution, w.Contribution) {
			t.Fatalf("term %d: %+v, want %+v", i, g, w)
		}
	}
	for i, w := range want.Neighbours {
		g := got.Neighbours[i]
		if g.ID != w.ID || g.Label != w.Label || !same(g.Similarity, w.Similarity) {
			t.Fatalf("neighbour %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestPredictionAvroRefusesNonFinite(t *testing.T) {
	nan := math.NaN()
	for _, p := range []Prediction{
		{ID: "a", Scores: map[string]float64{"x": math.Inf(1)}},
		{ID: "a", Scores: map[string]float64{}, Prob: &nan},
		{ID: "a", Scores: map[string]float64{}, Explanation: &Explanation{Terms: []Term{{Contribution: nan}}}},
	} {
		if _, err := p.AppendAvro(nil); err == nil {
			t.Fatalf("%+v encoded", p)
		}
	}
}

// TestPredictionAvroSchemaDocumented: docs/INPUT.md shows the schema the
// predictions are written under.
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
}
