package ingest

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParsePointer(t *testing.T) {
	tests := []struct {
		in     string
		tokens []string
		bad    bool
	}{
		{in: "/id", tokens: []string{"id"}},
		{in: "/author/followers", tokens: []string{"author", "followers"}},
		{in: "/a~1b/c~0d", tokens: []string{"a/b", "c~d"}},
		{in: "/~01", tokens: []string{"~1"}},
		{in: "/", tokens: []string{""}},
		{in: "/tags/0", tokens: []string{"tags", "0"}},
		{in: "", bad: true},
		{in: "id", bad: true},
		{in: "/a~", bad: true},
		{in: "/a~2", bad: true},
	}
	for _, tt := range tests {
		p, err := ParsePointer(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParsePointer(%q) accepted", tt.in)
			}
			continue
		}
		if err != nil || !slices.Equal(p.tokens, tt.tokens) || p.String() != tt.in {
			t.Errorf("ParsePointer(%q) = %q, %v; want %q", tt.in, p.tokens, err, tt.tokens)
		}
	}
}

func TestPointerLookup(t *testing.T) {
	doc := []byte(`{"a": {"b": [10, {"c": "x"}, null]}, "e\u0073c": 1, "a/b": 2, "m~n": 3, "": 4, "n": null, "s": "str", "d": {"k": 1, "k": 2}}`)
	tests := []struct {
		ptr    string
		want   string // "" for absent
		reason Reason
	}{
		{ptr: "/a/b/0", want: "10"},
		{ptr: "/a/b/1/c", want: `"x"`},
		{ptr: "/a/b/2", want: "null"},
		{ptr: "/a/b/2/c"},
		{ptr: "/a/b/3"},
		{ptr: "/a/b/-"},
		{ptr: "/a/b/01"},
		{ptr: "/a/b/x"},
		{ptr: "/esc", want: "1"},
		{ptr: "/a~1b", want: "2"},
		{ptr: "/m~0n", want: "3"},
		{ptr: "/", want: "4"},
		{ptr: "/n/x"},
		{ptr: "/nothing/x"},
		{ptr: "/s/x", reason: ReasonWrongType},
		{ptr: "/d/k", reason: ReasonDuplicateField},
		{ptr: "/d/j"},
	}
	for _, tt := range tests {
		got, err := MustPointer(tt.ptr).lookup(doc)
		if tt.reason != "" {
			checkDecodeError(t, err, tt.reason, tt.ptr)
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("lookup(%s) = %q, %v; want %q", tt.ptr, got, err, tt.want)
		}
	}
}

// moderation is the mapping of a moderation team's posts:
//
//	{"post_id": 78, "body": "...", "title": "...", "author": {"followers": 12, "stats": {...}},
//	 "created_at": 1764331200, "verdict": "spam"}
func moderation() *ExampleMapping {
	return &ExampleMapping{
		ID: MustPointer("/post_id"), IDNumbers: true,
		TS: MustPointer("/created_at"), TSNumbers: TimeAuto,
		Text:     []Pointer{MustPointer("/title"), MustPointer("/body")},
		Features: MustPointer("/author/stats"),
		Fields:   []FeatureField{{Name: "followers", At: MustPointer("/author/followers")}},
		Label:    MustPointer("/verdict"), TextWithFeatures: true,
	}
}

func TestDecodeMappedExampleGood(t *testing.T) {
	mod := Decoder{Examples: moderation()}
	only := func(m ExampleMapping) Decoder { return Decoder{Examples: &m} }
	id := func(want string) func(*testing.T, Example) {
		return func(t *testing.T, ex Example) {
			if ex.ID != want {
				t.Errorf("id = %q, want %q", ex.ID, want)
			}
		}
	}
	at := func(want time.Time) func(*testing.T, Example) {
		return func(t *testing.T, ex Example) {
			if !ex.TS.Equal(want) {
				t.Errorf("ts = %v, want %v", ex.TS, want)
			}
		}
	}
	sameVector := func(d Decoder, in string) func(*testing.T, Example) {
		return func(t *testing.T, ex Example) {
			want, err := d.DecodeExample([]byte(in))
			if err != nil || !reflect.DeepEqual(ex.Vector, want.Vector) {
				t.Errorf("vector = %+v, want %+v (%v)", ex.Vector, want.Vector, err)
			}
		}
	}
	var plain Decoder
	dayS := time.Date(2025, 11, 28, 12, 0, 0, 0, time.UTC)
	tests := []decodeCase{
		{name: "number id", dec: mod, in: `{"post_id": 78, "body": "hello world"}`, check: id("78")},
		{name: "negative number id", dec: mod, in: `{"post_id": -3, "body": "x"}`, check: id("-3")},
		{name: "minus zero id", dec: mod, in: `{"post_id": -0, "body": "x"}`, check: id("0")},
		{name: "float id", dec: mod, in: `{"post_id": 7.8e1, "body": "x"}`, check: id("78")},
		{name: "huge integer id kept exact", dec: mod, in: `{"post_id": 1234567890123456789, "body": "x"}`, check: id("1234567890123456789")},
		{name: "fractional id", dec: mod, in: `{"post_id": 0.5, "body": "x"}`, check: id("0.5")},
		{name: "string id", dec: mod, in: `{"post_id": "p-1", "body": "x"}`, check: id("p-1")},
		{name: "unix seconds auto", dec: mod, in: `{"post_id": 1, "created_at": 1764331200, "body": "x"}`, check: at(dayS)},
		{name: "unix millis auto", dec: mod, in: `{"post_id": 1, "created_at": 1764331200250, "body": "x"}`, check: at(dayS.Add(250 * time.Millisecond))},
		{name: "fractional seconds", dec: mod, in: `{"post_id": 1, "created_at": 1764331200.5, "body": "x"}`, check: at(dayS.Add(500 * time.Millisecond))},
		{name: "rfc3339 still read", dec: mod, in: `{"post_id": 1, "created_at": "2025-11-28T12:00:00Z", "body": "x"}`, check: at(dayS)},
		{name: "seconds unit", dec: only(ExampleMapping{ID: MustPointer("/id"), TS: MustPointer("/t"), TSNumbers: TimeSeconds, Text: []Pointer{MustPointer("/text")}}),
			in: `{"id": "a", "t": 1764331200, "text": "x"}`, check: at(dayS)},
		{name: "milliseconds unit", dec: only(ExampleMapping{ID: MustPointer("/id"), TS: MustPointer("/t"), TSNumbers: TimeMilliseconds, Text: []Pointer{MustPointer("/text")}}),
			in: `{"id": "a", "t": 1764331200, "text": "x"}`, check: at(time.UnixMilli(1764331200).UTC())},
		{name: "number label", dec: mod, in: `{"post_id": 1, "verdict": 1.0, "body": "x"}`, check: func(t *testing.T, ex Example) {
			if !ex.Labeled || ex.Label != "1" {
				t.Errorf("label %q labeled %v", ex.Label, ex.Labeled)
			}
		}},
		{name: "null label", dec: mod, in: `{"post_id": 1, "verdict": null, "body": "x"}`, check: func(t *testing.T, ex Example) {
			if ex.Labeled {
				t.Errorf("labeled %q", ex.Label)
			}
		}},
		{name: "text fields joined", dec: mod, in: `{"post_id": 1, "title": "Big news", "body": "read this"}`,
			check: sameVector(plain, `{"id": "1", "text": "Big news\nread this"}`)},
		{name: "one text field of two", dec: mod, in: `{"post_id": 1, "body": "read this", "title": null}`,
			check: sameVector(plain, `{"id": "1", "text": "read this"}`)},
		{name: "features alone", dec: mod, in: `{"post_id": 1, "author": {"stats": {"posts": 3, "7": 2}}}`,
			check: sameVector(plain, `{"id": "1", "features": {"posts": 3, "7": 2}}`)},
		{name: "feature field alone", dec: mod, in: `{"post_id": 1, "author": {"followers": 12}}`,
			check: sameVector(plain, `{"id": "1", "features": {"followers": 12}}`)},
		{name: "features and a feature field", dec: mod, in: `{"post_id": 1, "author": {"followers": 12, "stats": {"posts": 3}}}`,
			check: sameVector(plain, `{"id": "1", "features": {"followers": 12, "posts": 3}}`)},
		{name: "text and features", dec: mod, in: `{"post_id": 1, "body": "hello world", "author": {"followers": 12}}`, check: func(t *testing.T, ex Example) {
			text := plain.Featurizer.Text("hello world")
			named, _ := plain.DecodeExample([]byte(`{"id": "1", "features": {"followers": 12}}`))
			if want := addSparse(text, named.Vector); !reflect.DeepEqual(ex.Vector, want) {
				t.Errorf("vector = %+v, want %+v", ex.Vector, want)
			}
		}},
		{name: "empty text beside features", dec: mod, in: `{"post_id": 1, "body": "...", "author": {"followers": 12}}`,
			check: sameVector(plain, `{"id": "1", "features": {"followers": 12}}`)},
		{name: "dense vector", dec: only(ExampleMapping{ID: MustPointer("/meta/id"), Vector: MustPointer("/emb/0")}),
			in: `{"meta": {"id": "v"}, "emb": [[1, 2], [3]]}`, check: sameVector(plain, `{"id": "v", "vector": [1, 2]}`)},
		{name: "indices and values", dec: only(ExampleMapping{ID: MustPointer("/id"), Indices: MustPointer("/sv/i"), Values: MustPointer("/sv/v")}),
			in: `{"id": "s", "sv": {"i": [4, 1], "v": [1, 2]}}`, check: sameVector(plain, `{"id": "s", "indices": [4, 1], "values": [1, 2]}`)},
		{name: "default pointers by the mapping", dec: only(DefaultExampleMapping()), in: `{"id": "a", "ts": "2025-11-28T12:00:00Z", "text": "x y", "label": "spam"}`,
			check: sameVector(plain, `{"id": "a", "text": "x y"}`)},
	}
	runMappedCases(t, tests, nil)
}

func TestDecodeMappedExampleReasons(t *testing.T) {
	mod := Decoder{Examples: moderation()}
	small := Decoder{Examples: moderation(), Limits: Limits{MaxTextBytes: 8, MaxFeatures: 2, MaxIDBytes: 3}}
	strict := *moderation()
	strict.IDNumbers, strict.TSNumbers, strict.TextWithFeatures = false, TimeNoNumbers, false
	str := Decoder{Examples: &strict}
	tests := []decodeCase{
		{name: "missing id", dec: mod, in: `{"body": "x"}`, reason: ReasonMissingID, field: "/post_id"},
		{name: "null id", dec: mod, in: `{"post_id": null, "body": "x"}`, reason: ReasonMissingID, field: "/post_id"},
		{name: "bool id", dec: mod, in: `{"post_id": true, "body": "x"}`, reason: ReasonWrongType, field: "/post_id"},
		{name: "number id refused", dec: str, in: `{"post_id": 78, "body": "x"}`, reason: ReasonWrongType, field: "/post_id"},
		{name: "overflowing id", dec: mod, in: `{"post_id": 1e400, "body": "x"}`, reason: ReasonNonFinite, field: "/post_id"},
		{name: "id too long", dec: small, in: `{"post_id": 12345, "body": "x"}`, reason: ReasonIDTooLong, field: "/post_id"},
		{name: "duplicate id", dec: mod, in: `{"post_id": 1, "post_id": 2, "body": "x"}`, reason: ReasonDuplicateField, field: "/post_id"},
		{name: "number ts refused", dec: str, in: `{"post_id": "a", "created_at": 1764331200, "body": "x"}`, reason: ReasonWrongType, field: "/created_at"},
		{name: "ts beyond 9999", dec: mod, in: `{"post_id": 1, "created_at": 1e17, "body": "x"}`, reason: ReasonBadTimestamp, field: "/created_at"},
		{name: "ts words", dec: mod, in: `{"post_id": 1, "created_at": "noon", "body": "x"}`, reason: ReasonBadTimestamp, field: "/created_at"},
		{name: "ts object", dec: mod, in: `{"post_id": 1, "created_at": {}, "body": "x"}`, reason: ReasonWrongType, field: "/created_at"},
		{name: "label bool", dec: mod, in: `{"post_id": 1, "verdict": true, "body": "x"}`, reason: ReasonWrongType, field: "/verdict"},
		{name: "empty label", dec: mod, in: `{"post_id": 1, "verdict": "", "body": "x"}`, reason: ReasonEmptyLabel, field: "/verdict"},
		{name: "text number", dec: mod, in: `{"post_id": 1, "body": 5}`, reason: ReasonWrongType, field: "/body"},
		{name: "second text number", dec: mod, in: `{"post_id": 1, "title": "a", "body": 5}`, reason: ReasonWrongType, field: "/body"},
		{name: "texts too long", dec: small, in: `{"post_id": 1, "title": "abcd", "body": "efgh"}`, reason: ReasonOversized, field: "/body"},
		{name: "empty text", dec: mod, in: `{"post_id": 1, "body": "!!"}`, reason: ReasonEmptyText, field: "/body"},
		{name: "author not an object", dec: mod, in: `{"post_id": 1, "author": "x"}`, reason: ReasonWrongType, field: "/author/stats"},
		{name: "feature field string", dec: mod, in: `{"post_id": 1, "author": {"followers": "12"}}`, reason: ReasonWrongType, field: "/author/followers"},
		{name: "feature field overflow", dec: mod, in: `{"post_id": 1, "author": {"followers": 1e999}}`, reason: ReasonNonFinite, field: "/author/followers"},
		{name: "features array", dec: mod, in: `{"post_id": 1, "author": {"stats": [1]}}`, reason: ReasonWrongType, field: "/author/stats"},
		{name: "too many features", dec: small, in: `{"post_id": 1, "author": {"followers": 1, "stats": {"a": 1, "b": 2}}}`, reason: ReasonTooManyFeatures, field: "/author/followers"},
		{name: "text with features refused", dec: str, in: `{"post_id": "a", "body": "x", "author": {"followers": 1}}`, reason: ReasonMultiplePayloads},
		{name: "no payload", dec: mod, in: `{"post_id": 1, "author": {}}`, reason: ReasonNoPayload},
		{name: "not an object", dec: mod, in: `[1]`, reason: ReasonWrongType},
		{name: "malformed", dec: mod, in: `{"post_id": 1,`, reason: ReasonMalformedJSON},
	}
	runMappedCases(t, tests, nil)
}

func TestDecodeMappedErrorNamesThePointer(t *testing.T) {
	d := Decoder{Examples: moderation()}
	_, err := d.DecodeExample([]byte(`{"body": "x"}`))
	if want := "decode example: /post_id: missing_id: missing"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	_, err = d.DecodeExample([]byte(`{"post_id": 5, "author": {"followers": "many"}}`))
	if want := `decode example "5": /author/followers: wrong_type: /author/followers is a string, want a number`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	_, err = d.DecodeExample([]byte(`{"post_id": 5, "author": {"stats": {"a": 1}, "stats": {}}}`))
	if want := `decode example "5": /author/stats: duplicate_field: /author/stats appears more than once`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestDecodeKeyAsID(t *testing.T) {
	m := &ExampleMapping{IDFromKey: true, Text: []Pointer{MustPointer("/body")}}
	d := Decoder{Examples: m, Labels: &LabelMapping{IDFromKey: true, Label: MustPointer("/verdict")}, Limits: Limits{MaxIDBytes: 4}}
	tests := []struct {
		key    string
		id     string
		reason Reason
	}{
		{key: "p-1", id: "p-1"},
		{key: "", reason: ReasonMissingID},
		{key: "\xff", reason: ReasonInvalidUTF8},
		{key: "toolong", reason: ReasonIDTooLong},
	}
	for _, tt := range tests {
		ex, err := d.DecodeExampleRecord(context.Background(), []byte(tt.key), []byte(`{"id": "ignored", "body": "hello"}`))
		l, lerr := d.DecodeLabelRecord(context.Background(), []byte(tt.key), []byte(`{"verdict": "spam"}`))
		if tt.reason != "" {
			checkDecodeError(t, err, tt.reason, "key")
			checkDecodeError(t, lerr, tt.reason, "key")
			continue
		}
		if err != nil || ex.ID != tt.id || lerr != nil || l != (Label{tt.id, "spam"}) {
			t.Errorf("key %q: example %q (%v), label %+v (%v)", tt.key, ex.ID, err, l, lerr)
		}
	}
	// POST /v1/predict decodes messages without their record.
	if ex, err := d.DecodeExample([]byte(`{"body": "hello"}`)); err != nil || ex.ID != "" || ex.Vector.NNZ() == 0 {
		t.Errorf("without a record: %+v, %v", ex, err)
	}
}

func TestDecodeMappedLabel(t *testing.T) {
	d := Decoder{Labels: &LabelMapping{ID: MustPointer("/post/id"), IDNumbers: true, Label: MustPointer("/verdict")}}
	tests := []struct {
		in     string
		want   Label
		reason Reason
		field  string
	}{
		{in: `{"post": {"id": 78}, "verdict": "spam"}`, want: Label{"78", "spam"}},
		{in: `{"post": {"id": "a"}, "verdict": -1}`, want: Label{"a", "-1"}},
		{in: `{"post": {"id": "a"}}`, reason: ReasonMissingLabel, field: "/verdict"},
		{in: `{"post": {"id": "a"}, "verdict": null}`, reason: ReasonMissingLabel, field: "/verdict"},
		{in: `{"post": {}, "verdict": "x"}`, reason: ReasonMissingID, field: "/post/id"},
		{in: `{"post": {"id": []}, "verdict": "x"}`, reason: ReasonWrongType, field: "/post/id"},
	}
	for _, tt := range tests {
		got, err := d.DecodeLabel([]byte(tt.in))
		if tt.reason != "" {
			checkDecodeError(t, err, tt.reason, tt.field)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("DecodeLabel(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestDefaultMappingIsTheDefaultSchema: the default schema written as a
// mapping decodes the default path's messages alike, errors aside, which
// name pointers instead of fields.
func TestDefaultMappingIsTheDefaultSchema(t *testing.T) {
	m := DefaultExampleMapping()
	if !m.IsDefault() || !DefaultLabelMapping().IsDefault() || moderation().IsDefault() {
		t.Fatal("IsDefault does not tell the default mapping")
	}
	var plain Decoder
	mapped := Decoder{Examples: &m}
	for _, in := range exampleSeeds {
		want, werr := plain.DecodeExample([]byte(in))
		got, gerr := mapped.DecodeExample([]byte(in))
		if ReasonOf(werr) != ReasonOf(gerr) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: mapped %+v (%v), default %+v (%v)", in, got, gerr, want, werr)
		}
	}
}

func TestNumericTime(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		unit TimeUnit
		want time.Time
		ok   bool
	}{
		{x: 0, unit: TimeSeconds, want: time.Unix(0, 0), ok: true},
		{x: -1.5, unit: TimeSeconds, want: time.Unix(-2, 5e8), ok: true},
		{x: 99999999999, unit: TimeAuto, want: time.Unix(99999999999, 0), ok: true},
		{x: 1e11, unit: TimeAuto, want: time.UnixMilli(1e11), ok: true},
		{x: -1e11, unit: TimeAuto, want: time.UnixMilli(-1e11), ok: true},
		{x: 1.5, unit: TimeMilliseconds, want: time.Unix(0, 1.5e6), ok: true},
		{x: 253402300799, unit: TimeSeconds, want: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), ok: true},
		{x: 253402300800, unit: TimeSeconds},
		{x: -62135596801, unit: TimeSeconds},
		{x: math.MaxFloat64, unit: TimeMilliseconds},
	} {
		got, ok := numericTime(tt.x, tt.unit)
		if ok != tt.ok || ok && !got.Equal(tt.want) {
			t.Errorf("numericTime(%v, %d) = %v, %v; want %v, %v", tt.x, tt.unit, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMappingValidate(t *testing.T) {
	for _, tt := range []struct {
		m   ExampleMapping
		bad string
	}{
		{m: *moderation()},
		{m: ExampleMapping{IDFromKey: true}},
		{m: ExampleMapping{}, bad: "ID"},
		{m: ExampleMapping{ID: MustPointer("/id"), Fields: []FeatureField{{Name: "", At: MustPointer("/a")}}}, bad: "Fields[0]"},
		{m: ExampleMapping{ID: MustPointer("/id"), Fields: []FeatureField{{Name: "a"}}}, bad: "Fields[0]"},
		{m: ExampleMapping{ID: MustPointer("/id"), Fields: []FeatureField{{"a", MustPointer("/a")}, {"a", MustPointer("/b")}}}, bad: "Fields[1]"},
		{m: ExampleMapping{ID: MustPointer("/id"), Indices: MustPointer("/i")}, bad: "Indices"},
		{m: ExampleMapping{ID: MustPointer("/id"), Text: []Pointer{{}}}, bad: "Text[0]"},
	} {
		err := tt.m.Validate()
		if tt.bad == "" && err != nil || tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad)) {
			t.Errorf("Validate(%+v) = %v, want it to name %q", tt.m, err, tt.bad)
		}
	}
}

// runMappedCases runs decode cases through DecodeExampleRecord with key.
func runMappedCases(t *testing.T, tests []decodeCase, key []byte) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := tt.dec.DecodeExampleRecord(context.Background(), key, []byte(tt.in))
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("DecodeExampleRecord(%s): %v", tt.in, err)
				}
				if ex.ID != "" {
					checkExample(t, &tt.dec, ex)
				}
				tt.check(t, ex)
				return
			}
			checkDecodeError(t, err, tt.reason, tt.field)
		})
	}
}
