package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/hamba/avro/v2"
)

// fuzzMappedDecoders are the mappings fuzzing runs under: the moderation
// team's (numbers as ids, Unix times, two text fields, features and a
// feature field with text), the record key as the id with small limits,
// and the default schema written as a mapping, which must decode as the
// default path does.
func fuzzMappedDecoders() []Decoder {
	def := DefaultExampleMapping()
	return []Decoder{
		{Examples: moderation()},
		{
			Examples: &ExampleMapping{IDFromKey: true, Text: []Pointer{MustPointer("/a/0"), MustPointer("/b")},
				Features: MustPointer("/f"), Vector: MustPointer("/v"), TS: MustPointer("/t"), TSNumbers: TimeMilliseconds},
			Limits:     Limits{MaxMessageBytes: 512, MaxIDBytes: 8, MaxTextBytes: 64, MaxFeatures: 4, MaxClassNameBytes: 4},
			Featurizer: Featurizer{Dim: 16, DenseDim: 3, Signed: true, Normalize: true},
		},
		{Examples: &def},
	}
}

var mappedSeeds = []string{
	`{"post_id": 78, "body": "hello world", "author": {"followers": 12, "stats": {"posts": 3}}, "created_at": 1764331200}`,
	`{"post_id": "p", "title": "T", "body": "b", "verdict": 1.0, "created_at": "2025-11-28T12:00:00Z"}`,
	`{"post_id": 1e400, "body": 5}`, `{"post_id": -0, "author": {"stats": [1]}}`,
	`{"a": ["x", "y"], "b": "z", "f": {"1": 2}, "t": 1764331200123}`, `{"v": [1, 2, 3]}`,
	`{"id": "a", "text": "x", "text": "y"}`, `{"id": "a", "features": {"x": 1}, "text": "y"}`,
	`{"post_id": 2, "author": {"followers": "x"}}`, `[]`, `{"post_id": 3, "author": null, "body": "\u00e9"}`,
}

func FuzzDecodeMappedExample(f *testing.F) {
	for k, s := range mappedSeeds {
		f.Add([]byte(s), []byte("k"), uint8(k))
	}
	decoders := fuzzMappedDecoders()
	var plain Decoder
	f.Fuzz(func(t *testing.T, b, key []byte, config uint8) {
		k := int(config) % len(decoders)
		d := &decoders[k]
		ex, err := d.DecodeExampleRecord(context.Background(), key, b)
		if k == 2 {
			want, werr := plain.DecodeExample(b)
			if ReasonOf(err) != ReasonOf(werr) || !reflect.DeepEqual(ex, want) {
				t.Fatalf("the default mapping gives %+v (%v), the default schema %+v (%v)", ex, err, want, werr)
			}
		}
		if err != nil {
			checkFuzzError(t, err)
			if !reflect.DeepEqual(ex, Example{}) {
				t.Fatalf("error %v came with example %+v", err, ex)
			}
			return
		}
		checkExample(t, d, ex)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("encoding/json rejects an accepted message: %v", err)
		}
		if id, ok := m["post_id"].(string); k == 0 && ok && id != ex.ID {
			t.Fatalf("id = %q, encoding/json says %q", ex.ID, id)
		}
		if k == 1 && ex.ID != string(key) {
			t.Fatalf("id = %q, key %q", ex.ID, key)
		}
		again, err := d.DecodeExampleRecord(context.Background(), key, slices.Clone(b))
		if err != nil || !reflect.DeepEqual(again, ex) {
			t.Fatalf("decoding twice gave %+v, %v and %+v", ex, err, again)
		}
	})
}

// FuzzDecodeAvroRecord decodes any body under each test schema: what
// the decoder accepts, hamba's own decoder must accept too, and its JSON
// form is JSON.
func FuzzDecodeAvroRecord(f *testing.F) {
	schemas := testSchemas(f)
	title := "t"
	for _, seed := range [][]byte{
		wire(f, schemas, postSchemaID, post{PostID: 78, Title: &title, Body: "a prize", Author: author{Followers: 1, Stats: map[string]float64{"p": 1}}, CreatedAt: 1764331200}),
		wire(f, schemas, simpleSchemaID, map[string]any{"id": "a", "text": "hello", "label": map[string]any{"string": "spam"}}),
		{0, 0, 0, 0, simpleSchemaID, 2, 'a', 0, 0},
		{1, 2, 3}, {},
	} {
		for k := range uint8(3) {
			f.Add(seed, k)
		}
	}
	ids := []uint32{postSchemaID, simpleSchemaID, kindsSchemaID}
	m := moderation()
	d := Decoder{Examples: m, Avro: schemas, Limits: Limits{MaxMessageBytes: 4096}}
	plain := Decoder{Avro: schemas, Limits: Limits{MaxMessageBytes: 4096}}
	f.Fuzz(func(t *testing.T, rec []byte, schema uint8) {
		id := ids[int(schema)%len(ids)]
		if len(rec) >= wireHeader && rec[0] == wireMagic {
			h := WireHeader(id)
			copy(rec, h[:]) // mostly a known schema: the body is what is fuzzed
		}
		out, _, err := d.avroJSON(context.Background(), rec, d.Limits.withDefaults())
		if err != nil {
			checkFuzzError(t, err)
			var de *DecodeError
			if errors.As(err, &de) && de.Field != "" {
				if _, perr := ParsePointer(de.Field); perr != nil {
					t.Fatalf("error %v names a field that is no JSON Pointer: %v", err, perr)
				}
			}
		} else {
			if !json.Valid(out) {
				t.Fatalf("JSON form %q is not JSON", out)
			}
			var v any
			if err := avro.Unmarshal(schemas.schemas[id], rec[wireHeader:], &v); err != nil {
				t.Fatalf("accepted a body hamba refuses: %v", err)
			}
		}
		for _, dec := range []*Decoder{&d, &plain} {
			if ex, err := dec.DecodeExampleRecord(context.Background(), nil, rec); err != nil {
				checkFuzzError(t, err)
			} else {
				checkExample(t, dec, ex)
			}
		}
	})
}
