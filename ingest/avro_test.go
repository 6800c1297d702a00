package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// fakeSchemas is a SchemaSource of fixed schemas; ids in unusable answer
// ErrSchemaUnusable, and every id answers down while it is set.
type fakeSchemas struct {
	schemas  map[uint32]avro.Schema
	unusable map[uint32]bool
	down     error
}

func (f *fakeSchemas) AvroSchema(_ context.Context, id uint32) (avro.Schema, error) {
	switch {
	case f.down != nil:
		return nil, f.down
	case f.unusable[id]:
		return nil, fmt.Errorf("id %d: %w: not Avro", id, ErrSchemaUnusable)
	case f.schemas[id] == nil:
		return nil, fmt.Errorf("id %d: %w", id, ErrSchemaNotFound)
	}
	return f.schemas[id], nil
}

const (
	postSchemaID   = 7
	simpleSchemaID = 8
	kindsSchemaID  = 9
)

// postSchema is the moderation team's posts in Avro.
const postSchema = `{"type": "record", "name": "Post", "namespace": "moderation", "fields": [
	{"name": "post_id", "type": "long"},
	{"name": "title", "type": ["null", "string"], "default": null},
	{"name": "body", "type": "string"},
	{"name": "author", "type": {"type": "record", "name": "Author", "fields": [
		{"name": "followers", "type": "int"},
		{"name": "stats", "type": {"type": "map", "values": "double"}}
	]}},
	{"name": "created_at", "type": "long"},
	{"name": "verdict", "type": ["null", "string"], "default": null}
]}`

// simpleSchema is the default schema in Avro.
const simpleSchema = `{"type": "record", "name": "Example", "fields": [
	{"name": "id", "type": "string"},
	{"name": "text", "type": "string"},
	{"name": "label", "type": ["null", "string"], "default": null}
]}`

// kindsSchema has one field of each kind the JSON form writes.
const kindsSchema = `{"type": "record", "name": "Kinds", "fields": [
	{"name": "b", "type": "boolean"},
	{"name": "f", "type": "float"},
	{"name": "d", "type": "double"},
	{"name": "day", "type": {"type": "int", "logicalType": "date"}},
	{"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
	{"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
	{"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["red", "green"]}},
	{"name": "fx", "type": {"type": "fixed", "name": "Two", "size": 2}},
	{"name": "raw", "type": "bytes"},
	{"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
	{"name": "tags", "type": {"type": "array", "items": "string"}},
	{"name": "u", "type": ["null", "long", "string"]}
]}`

func testSchemas(t testing.TB) *fakeSchemas {
	t.Helper()
	f := &fakeSchemas{schemas: map[uint32]avro.Schema{}, unusable: map[uint32]bool{99: true}}
	for id, text := range map[uint32]string{postSchemaID: postSchema, simpleSchemaID: simpleSchema, kindsSchemaID: kindsSchema} {
		s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
		if err != nil {
			t.Fatal(err)
		}
		f.schemas[id] = s
	}
	return f
}

// wire encodes v under schema id in Confluent's wire format, with hamba's
// encoder as the reference.
func wire(t testing.TB, schemas *fakeSchemas, id uint32, v any) []byte {
	t.Helper()
	body, err := avro.Marshal(schemas.schemas[id], v)
	if err != nil {
		t.Fatal(err)
	}
	h := WireHeader(id)
	return append(h[:], body...)
}

type post struct {
	PostID    int64   `avro:"post_id"`
	Title     *string `avro:"title"`
	Body      string  `avro:"body"`
	Author    author  `avro:"author"`
	CreatedAt int64   `avro:"created_at"`
	Verdict   *string `avro:"verdict"`
}

type author struct {
	Followers int                `avro:"followers"`
	Stats     map[string]float64 `avro:"stats"`
}

func TestDecodeAvroMapped(t *testing.T) {
	schemas := testSchemas(t)
	m := moderation()
	m.TSNumbers = TimeSeconds
	avroDec := Decoder{Examples: m, Labels: &LabelMapping{ID: MustPointer("/post_id"), IDNumbers: true, Label: MustPointer("/verdict")}, Avro: schemas}
	jsonDec := Decoder{Examples: m}
	title, spam := "Win", "spam"
	p := post{PostID: 78, Title: &title, Body: "a prize for you", Author: author{Followers: 12, Stats: map[string]float64{"posts": 3}}, CreatedAt: 1764331200, Verdict: &spam}
	rec := wire(t, schemas, postSchemaID, p)
	got, err := avroDec.DecodeExampleRecord(context.Background(), nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := jsonDec.DecodeExample([]byte(`{"post_id": 78, "title": "Win", "body": "a prize for you",
		"author": {"followers": 12, "stats": {"posts": 3}}, "created_at": 1764331200, "verdict": "spam"}`))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Avro gives %+v, the same in JSON %+v (%v)", got, want, err)
	}
	if got.ID != "78" || got.Label != "spam" || got.TS.Unix() != 1764331200 {
		t.Fatalf("example %+v", got)
	}
	l, err := avroDec.DecodeLabelRecord(context.Background(), nil, rec)
	if err != nil || l != (Label{"78", "spam"}) {
		t.Fatalf("label %+v, %v", l, err)
	}
}

func TestDecodeAvroDefaultSchema(t *testing.T) {
	schemas := testSchemas(t)
	d := Decoder{Avro: schemas}
	rec := wire(t, schemas, simpleSchemaID, map[string]any{"id": "a", "text": "hello world", "label": nil})
	ex, err := d.DecodeExampleRecord(context.Background(), nil, rec)
	if err != nil || ex.ID != "a" || ex.Labeled || !reflect.DeepEqual(ex.Vector, d.Featurizer.Text("hello world")) {
		t.Fatalf("example %+v, %v", ex, err)
	}
	// POST /v1/predict's messages stay JSON.
	if ex, err := d.DecodeExample([]byte(`{"id": "b", "text": "x"}`)); err != nil || ex.ID != "b" {
		t.Fatalf("a JSON message beside Avro records: %+v, %v", ex, err)
	}
}

// TestAvroJSONForm checks the JSON form of each kind of Avro value
// against what it stands for.
func TestAvroJSONForm(t *testing.T) {
	schemas := testSchemas(t)
	d := Decoder{Avro: schemas}
	rec := wire(t, schemas, kindsSchemaID, map[string]any{
		"b": true, "f": float32(0.5), "d": -2.25, "day": time.Date(2025, 11, 28, 0, 0, 0, 0, time.UTC),
		"ms": time.UnixMilli(1764331200123), "us": time.UnixMicro(1764331200123456), "e": "green",
		"fx": [2]byte{1, 2}, "raw": []byte("hi"), "price": mustRat("-12.34"), "tags": []any{"a", "b\"c"},
		"u": map[string]any{"string": "x\ny"},
	})
	out, _, err := d.avroJSON(context.Background(), rec, d.Limits.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":true,"f":0.5,"d":-2.25,"day":"2025-11-28T00:00:00Z","ms":"2025-11-28T12:00:00.123Z",` +
		`"us":"2025-11-28T12:00:00.123456Z","e":"green","fx":"AQI=","raw":"aGk=","price":-12.34,"tags":["a","b\"c"],"u":"x\u000ay"}`
	if string(out) != want {
		t.Fatalf("JSON form\n%s\nwant\n%s", out, want)
	}
	if !json.Valid(out) {
		t.Fatal("JSON form is not JSON")
	}
}

func mustRat(s string) any {
	var r big.Rat
	r.SetString(s)
	return &r
}

func TestDecodeAvroRefused(t *testing.T) {
	schemas := testSchemas(t)
	d := Decoder{Avro: schemas, Limits: Limits{MaxMessageBytes: 4096}}
	good := wire(t, schemas, simpleSchemaID, map[string]any{"id": "a", "text": "hello", "label": nil})
	nan := wire(t, schemas, kindsSchemaID, map[string]any{
		"b": true, "f": float32(0), "d": math.NaN(), "day": time.Unix(0, 0), "ms": time.Unix(0, 0), "us": time.Unix(0, 0),
		"e": "red", "fx": [2]byte{}, "raw": []byte{}, "price": mustRat("0"), "tags": []any{}, "u": nil,
	})
	withID := func(id uint32, body []byte) []byte {
		h := WireHeader(id)
		return append(h[:], body[wireHeader:]...)
	}
	badUTF8 := append([]byte{}, good...)
	badUTF8[len(badUTF8)-3] = 0xff // in "hello"
	tests := []struct {
		name   string
		in     []byte
		reason Reason
	}{
		{"empty", nil, ReasonNotWireFormat},
		{"JSON instead", []byte(`{"id": "a", "text": "x"}`), ReasonNotWireFormat},
		{"magic byte 1", append([]byte{1}, good[1:]...), ReasonNotWireFormat},
		{"header cut", good[:3], ReasonNotWireFormat},
		{"unknown schema id", withID(1234, good), ReasonUnknownSchema},
		{"unusable schema", withID(99, good), ReasonUnusableSchema},
		{"body cut", good[:len(good)-2], ReasonMalformedAvro},
		{"bytes left", append(append([]byte{}, good...), 0), ReasonMalformedAvro},
		{"union index out of range", append(append([]byte{}, good[:len(good)-1]...), 8), ReasonMalformedAvro},
		{"negative length", append(append([]byte{}, good[:wireHeader]...), 3), ReasonMalformedAvro},
		{"length past the record", append(append([]byte{}, good[:wireHeader]...), 0xfe, 0xff, 0xff, 0x0f), ReasonMalformedAvro},
		{"body of another schema", withID(postSchemaID, good), ReasonMalformedAvro},
		{"NaN", nan, ReasonNonFinite},
		{"invalid UTF-8", badUTF8, ReasonInvalidUTF8},
		{"oversized", append(withID(simpleSchemaID, good), make([]byte, 5000)...), ReasonOversized},
	}
	for _, tt := range tests {
		_, err := d.DecodeExampleRecord(context.Background(), nil, tt.in)
		if ReasonOf(err) != tt.reason {
			t.Errorf("%s: err = %v, want reason %s", tt.name, err, tt.reason)
		}
	}
}

// TestAvroRefusalNamesTheField: a body that goes wrong inside the value
// names the JSON Pointer of the field, item or map entry at fault, as a
// JSON message's refusal does.
func TestAvroRefusalNamesTheField(t *testing.T) {
	schemas := testSchemas(t)
	d := Decoder{Avro: schemas, Limits: Limits{MaxMessageBytes: 4096}}
	title := "t"
	p := wire(t, schemas, postSchemaID, post{PostID: 5, Title: &title, Body: "hello", Author: author{Followers: 3, Stats: map[string]float64{"a/b": 1.5}}})
	k := wire(t, schemas, kindsSchemaID, map[string]any{
		"b": true, "f": float32(0), "d": 2.0, "day": time.Unix(0, 0), "ms": time.Unix(0, 0), "us": time.Unix(0, 0),
		"e": "red", "fx": [2]byte{}, "raw": []byte{}, "price": mustRat("0"), "tags": []any{"x", "yyyy"}, "u": nil,
	})
	at := func(rec []byte, s string) int {
		i := strings.Index(string(rec), s)
		if i < 0 {
			t.Fatalf("%q not in the record", s)
		}
		return i
	}
	with := func(rec []byte, i int, b byte) []byte {
		out := append([]byte{}, rec...)
		out[i] = b
		return out
	}
	nan := append([]byte{}, k...)
	copy(nan[at(k, "\x00\x00\x00\x00\x00\x00\x00\x40"):], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	tests := []struct {
		name   string
		in     []byte
		reason Reason
		field  string
	}{
		{"union index out of range", with(p, wireHeader+1, 8), ReasonMalformedAvro, "/title"},
		{"invalid UTF-8", with(p, at(p, "hello")+1, 0xff), ReasonInvalidUTF8, "/body"},
		{"cut inside a map's value", p[:at(p, "a/b")+5], ReasonMalformedAvro, "/author/stats/a~1b"},
		{"map key not UTF-8", with(p, at(p, "a/b"), 0xff), ReasonInvalidUTF8, "/author/stats"},
		{"cut inside an array's second item", k[:at(k, "yyyy")+2], ReasonMalformedAvro, "/tags/1"},
		{"NaN", nan, ReasonNonFinite, "/d"},
		{"bytes left", append(append([]byte{}, p...), 0), ReasonMalformedAvro, ""},
	}
	for _, tt := range tests {
		_, err := d.DecodeExampleRecord(context.Background(), nil, tt.in)
		var de *DecodeError
		if !errors.As(err, &de) || de.Reason != tt.reason || de.Field != tt.field {
			t.Errorf("%s: err = %v, want reason %s at %q", tt.name, err, tt.reason, tt.field)
		}
	}
}

// TestAvroArrayOfNullsIsBounded: items that take no bytes cannot make
// the JSON form grow without bound.
func TestAvroArrayOfNullsIsBounded(t *testing.T) {
	s, err := avro.Parse(`{"type": "array", "items": "null"}`)
	if err != nil {
		t.Fatal(err)
	}
	d := Decoder{Avro: &fakeSchemas{schemas: map[uint32]avro.Schema{1: s}}, Limits: Limits{MaxMessageBytes: 64}}
	h := WireHeader(1)
	// One block of 2^62 nulls.
	rec := append(h[:], 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)
	if _, err := d.DecodeExampleRecord(context.Background(), nil, rec); ReasonOf(err) != ReasonOversized {
		t.Fatalf("err = %v, want oversized", err)
	}
}

// TestAvroRegistryDown: a record whose schema cannot be had is not a
// DecodeError, and says so, for the consumer to decode it again later.
func TestAvroRegistryDown(t *testing.T) {
	schemas := testSchemas(t)
	rec := wire(t, schemas, simpleSchemaID, map[string]any{"id": "a", "text": "hello", "label": nil})
	schemas.down = errors.New("connection refused")
	d := Decoder{Avro: schemas}
	_, err := d.DecodeExampleRecord(context.Background(), nil, rec)
	_, lerr := d.DecodeLabelRecord(context.Background(), nil, rec)
	for _, err := range []error{err, lerr} {
		if !errors.Is(err, ErrSchemaUnavailable) || ReasonOf(err) != "" || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("err = %v, want ErrSchemaUnavailable and no reason", err)
		}
	}
}
