package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// plainPrediction has Prediction's fields and tags but not its methods, so
// that encoding/json encodes it by reflection: the reference AppendJSON is
// held to.
type plainPrediction Prediction

// randomString draws strings that exercise every escape: controls, quotes,
// HTML characters, multi-byte runes, U+2028/9 and invalid UTF-8.
func randomString(r *rand.Rand) string {
	parts := []string{"a", "Z", "7", " ", "\"", "\\", "/", "<", ">", "&", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
		"é", "日本", "\u2028", "\u2029", "\U0001F600", "\xff", "\xc3", "\xed\xa0\x80", "doc-00000042", "spam"}
	var b []byte
	for range r.IntN(8) {
		b = append(b, parts[r.IntN(len(parts))]...)
	}
	return string(b)
}

func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(60)-30))
	case 3:
		return math.SmallestNonzeroFloat64 * float64(r.IntN(3)+1)
	case 4:
		return -math.MaxFloat64 * r.Float64()
	case 5:
		return 1e21 * float64(r.IntN(3)-1)
	case 6:
		return 1e-6 * float64(r.IntN(3)-1)
	}
	return r.NormFloat64()
}

func randomPrediction(r *rand.Rand) Prediction {
	p := Prediction{
		ID:           randomString(r),
		ModelVersion: r.Uint64() >> r.IntN(64),
		ModelEpoch:   r.Uint64() >> r.IntN(64) * uint64(r.IntN(2)), // 0 half the time: absent
		Source:       Source{Topic: randomString(r), Partition: r.IntN(100) - 1, Offset: r.Int64() >> r.IntN(63)},
	}
	if r.IntN(4) > 0 {
		label, prob := randomString(r), randomFloat(r)
		p.Label, p.Prob = &label, &prob
	}
	if r.IntN(3) > 0 {
		p.Reason = randomString(r)
	}
	p.Scores = map[string]float64{}
	for range r.IntN(20) {
		p.Scores[randomString(r)] = randomFloat(r)
	}
	p.Review = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		// Valid UTF-8 names: the escapes are the top-level fields' test.
		e := &Explanation{Class: "spam", Score: randomFloat(r), Bias: randomFloat(r), Space: "features", Rest: randomFloat(r)}
		for range r.IntN(4) {
			e.Terms = append(e.Terms, Term{Index: r.Int32(), Names: []string{"free money", "日本"}, Value: randomFloat(r), Contribution: randomFloat(r)})
		}
		for range r.IntN(3) {
			e.Neighbours = append(e.Neighbours, Neighbour{ID: "doc-7", Label: "ham", Similarity: randomFloat(r)})
		}
		p.Explanation = e
	}
	switch r.IntN(4) {
	case 0: // zero: no ts
	case 1:
		p.TS = time.Unix(r.Int64N(1<<35)-1<<34, r.Int64N(1e9)).UTC()
	case 2:
		p.TS = time.Unix(r.Int64N(1<<34), 0).In(time.FixedZone("", (r.IntN(48)-24)*1800))
	case 3:
		p.TS = time.Date(r.IntN(12000)-1000, 1, 1, 0, 0, 0, r.IntN(1000)*1000, time.UTC)
	}
	return p
}

// TestAppendJSONMatchesEncodingJSON holds the hand-written encoder to
// encoding/json over random predictions, errors included.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		p := randomPrediction(r)
		if r.IntN(50) == 0 {
			p.Scores["bad"] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.IntN(3)]
		}
		want, wantErr := json.Marshal(plainPrediction(p))
		got, err := p.AppendJSON([]byte("prefix"))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("prediction %d %+v: error %v, encoding/json's %v", i, p, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("prediction %d:\n got %s\nwant prefix%s", i, got, want)
		}
		if err != nil {
			continue
		}
		if viaMethod, err := json.Marshal(p); err != nil || !bytes.Equal(viaMethod, want) {
			t.Fatalf("prediction %d: json.Marshal through MarshalJSON gives %s, %v; want %s", i, viaMethod, err, want)
		}
	}
}

// TestAppendJSONDecodes decodes the hand-written encoder's output with
// encoding/json: it gives back the prediction it encoded, model_epoch
// included. Strings are valid UTF-8 here (invalid bytes become U+FFFD, as
// with json.Marshal) and times compare as instants.
func TestAppendJSONDecodes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	epochs := 0
	for i := range 5000 {
		p := randomPrediction(r)
		b, err := p.AppendJSON(nil)
		if err != nil {
			continue // a time encoding/json refuses too
		}
		want, distinct := validUTF8(p)
		if !distinct {
			continue
		}
		var got Prediction
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("prediction %d: %s does not decode: %v", i, b, err)
		}
		if !got.TS.Equal(want.TS) {
			t.Fatalf("prediction %d: ts %v decoded as %v", i, want.TS, got.TS)
		}
		got.TS, want.TS = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("prediction %d: %s decodes to\n%+v, want\n%+v", i, b, got, want)
		}
		if want.ModelEpoch != 0 {
			epochs++
		}
	}
	if epochs == 0 {
		t.Fatal("no prediction with an epoch was drawn")
	}
}

// validUTF8 returns p with its strings as JSON carries them, and false
// when two classes then have the same name.
func validUTF8(p Prediction) (Prediction, bool) {
	v := func(s string) string { // U+FFFD for each invalid byte, as JSON writes them
		var b strings.Builder
		for _, r := range s {
			b.WriteRune(r)
		}
		return b.String()
	}
	out := p
	out.ID, out.Reason, out.Source.Topic = v(p.ID), v(p.Reason), v(p.Source.Topic)
	if p.Label != nil {
		l := v(*p.Label)
		out.Label = &l
	}
	out.Scores = make(map[string]float64, len(p.Scores))
	for c, s := range p.Scores {
		out.Scores[v(c)] = s
	}
	return out, len(out.Scores) == len(p.Scores)
}

// TestMarshalWritesEmptyScores keeps the documented "scores": {} of a
// prediction made without a model.
func TestMarshalWritesEmptyScores(t *testing.T) {
	p := Prediction{ID: "x", Reason: "no model yet"}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"x","label":null,"scores":{},"prob":null,"model_version":0,"source":{"topic":"","partition":0,"offset":0},"reason":"no model yet"}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}

func BenchmarkPredictionAppendJSON(b *testing.B) {
	label, prob := "spam", 0.8734
	p := Prediction{ID: "doc-00012345", Label: &label, Prob: &prob, ModelVersion: 17,
		Scores: map[string]float64{"ham": -0.7312, "spam": 0.7312}, TS: time.Date(2026, 1, 1, 10, 20, 30, 0, time.UTC),
		Source: Source{Topic: "examples", Partition: 3, Offset: 123456}}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = p.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(plainPrediction(p))
		}
	})
}
