package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"streamer/synth"
)

// benchTexts returns n English-like texts of about size bytes: words drawn
// from a Zipfian vocabulary, with some capitals and punctuation.
func benchTexts(n, size int) []string {
	r := rand.New(rand.NewPCG(11, 12))
	vocab := make([]string, 20_000)
	for k := range vocab {
		w := make([]byte, 2+r.IntN(8))
		for i := range w {
			w[i] = byte('a' + r.IntN(26))
		}
		vocab[k] = string(w)
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	texts := make([]string, n)
	for k := range texts {
		var b strings.Builder
		for b.Len() < size {
			w := vocab[zipf.Uint64()]
			if r.IntN(10) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			b.WriteString([]string{" ", " ", " ", " ", ", ", ". "}[r.IntN(6)])
		}
		texts[k] = b.String()
	}
	return texts
}

func reportRate(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

func BenchmarkFeaturizeText(b *testing.B) {
	texts := benchTexts(256, 2048)
	f := Featurizer{}
	b.SetBytes(int64(len(texts[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.Text(texts[i%len(texts)])
		i++
	}
	reportRate(b, "docs/s")
}

func BenchmarkDecodeExampleText(b *testing.B) {
	texts := benchTexts(256, 2048)
	msgs := make([][]byte, len(texts))
	for k, s := range texts {
		msgs[k], _ = json.Marshal(map[string]any{"id": fmt.Sprintf("ex-%d", k), "ts": "2024-05-01T10:20:30Z", "label": "spam", "text": s})
	}
	benchmarkDecode(b, msgs)
}

// BenchmarkDecodeExampleDrainText decodes the examples of `bench drain`:
// generated documents of 20 to 60 words (some 300 bytes), an id, no label.
func BenchmarkDecodeExampleDrainText(b *testing.B) {
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 1})
	msgs := make([][]byte, 1024)
	for k := range msgs {
		d := gen.Next()
		msgs[k], _ = json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
	}
	benchmarkDecode(b, msgs)
}

func BenchmarkDecodeExampleFeatures(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	msgs := make([][]byte, 256)
	for k := range msgs {
		features := map[string]float64{}
		for range 100 {
			features[fmt.Sprintf("f%d", r.IntN(100_000))] = r.NormFloat64()
		}
		msgs[k], _ = json.Marshal(map[string]any{"id": fmt.Sprintf("ex-%d", k), "features": features})
	}
	benchmarkDecode(b, msgs)
}

func BenchmarkDecodeExampleIndexed(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	msgs := make([][]byte, 256)
	for k := range msgs {
		idx := make([]int, 100)
		val := make([]float64, 100)
		for i := range idx {
			idx[i] = i*2000 + r.IntN(2000)
			val[i] = r.NormFloat64()
		}
		msgs[k], _ = json.Marshal(map[string]any{"id": fmt.Sprintf("ex-%d", k), "indices": idx, "values": val})
	}
	benchmarkDecode(b, msgs)
}

// BenchmarkDecodeAvroRecord decodes the moderation team's posts in
// Avro (a title, a body of 2 KB, an author with eight named numbers) by
// their mapping.
func BenchmarkDecodeAvroRecord(b *testing.B) {
	schemas := testSchemas(b)
	texts := benchTexts(256, 2048)
	stats := map[string]float64{}
	for k := range 8 {
		stats[fmt.Sprintf("stat-%d", k)] = float64(k) / 8
	}
	recs := make([][]byte, len(texts))
	for k, s := range texts {
		title := fmt.Sprintf("post %d", k)
		recs[k] = wire(b, schemas, postSchemaID, post{PostID: int64(k), Title: &title, Body: s, Author: author{Followers: k, Stats: stats}, CreatedAt: 1764331200})
	}
	d := Decoder{Examples: moderation(), Avro: schemas}
	b.SetBytes(int64(len(recs[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := d.DecodeExampleRecord(context.Background(), nil, recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportRate(b, "examples/s")
}

func benchmarkDecode(b *testing.B, msgs [][]byte) {
	var d Decoder
	var size int
	for _, m := range msgs {
		size += len(m)
	}
	b.SetBytes(int64(size / len(msgs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := d.DecodeExample(msgs[i%len(msgs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportRate(b, "examples/s")
}

func BenchmarkLIBSVMLine(b *testing.B) {
	r := rand.New(rand.NewPCG(17, 18))
	var sb strings.Builder
	sb.WriteString("+1")
	for j := 1; j <= 100; j++ {
		fmt.Fprintf(&sb, " %d:%.6g", j*2000+r.IntN(2000), r.NormFloat64())
	}
	line := []byte(sb.String())
	var d Decoder
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.DecodeLIBSVMLine(line, "line-1"); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, "lines/s")
}
