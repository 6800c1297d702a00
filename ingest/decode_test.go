package ingest

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// decodeCase is one message and what decoding it must give: a reason and
// field for a bad one, or a check of the example for a good one.
type decodeCase struct {
	name   string
	dec    Decoder
	in     string
	reason Reason
	field  string
	check  func(t *testing.T, ex Example)
}

func TestDecodeExampleReasons(t *testing.T) {
	small := Decoder{Limits: Limits{MaxMessageBytes: 64, MaxIDBytes: 4, MaxTextBytes: 8, MaxFeatures: 3, MaxClassNameBytes: 5}}
	dim100 := Decoder{Featurizer: Featurizer{Dim: 100}}
	dense3 := Decoder{Featurizer: Featurizer{DenseDim: 3}}
	classes := Decoder{Limits: Limits{Classes: []string{"spam", "ham", "1"}}}
	tests := []decodeCase{
		{name: "oversized message", dec: small, in: `{"id":"a","text":"` + strings.Repeat("x", 64) + `"}`, reason: ReasonOversized},
		{name: "oversized text", dec: small, in: `{"id":"a","text":"abc def gh"}`, reason: ReasonOversized, field: "text"},
		{name: "invalid utf8", in: "{\"id\":\"a\xff\",\"text\":\"x\"}", reason: ReasonInvalidUTF8},
		{name: "empty input", in: ``, reason: ReasonMalformedJSON},
		{name: "truncated", in: `{"id":"a","text":"x"`, reason: ReasonMalformedJSON},
		{name: "trailing comma", in: `{"id":"a","text":"x",}`, reason: ReasonMalformedJSON},
		{name: "two values", in: `{"id":"a","text":"x"} {}`, reason: ReasonMalformedJSON},
		{name: "top-level array", in: `[{"id":"a"}]`, reason: ReasonWrongType},
		{name: "top-level null", in: `null`, reason: ReasonWrongType},
		{name: "top-level string", in: ` "x" `, reason: ReasonWrongType},
		{name: "id number", in: `{"id":5,"text":"x"}`, reason: ReasonWrongType, field: "id"},
		{name: "ts number", in: `{"id":"a","ts":5,"text":"x"}`, reason: ReasonWrongType, field: "ts"},
		{name: "label bool", in: `{"id":"a","label":true,"text":"x"}`, reason: ReasonWrongType, field: "label"},
		{name: "label object", in: `{"id":"a","label":{},"text":"x"}`, reason: ReasonWrongType, field: "label"},
		{name: "text number", in: `{"id":"a","text":5}`, reason: ReasonWrongType, field: "text"},
		{name: "features array", in: `{"id":"a","features":[1]}`, reason: ReasonWrongType, field: "features"},
		{name: "feature string", in: `{"id":"a","features":{"x":"1"}}`, reason: ReasonWrongType, field: "features"},
		{name: "values string", in: `{"id":"a","indices":[1],"values":"x"}`, reason: ReasonWrongType, field: "values"},
		{name: "value bool", in: `{"id":"a","indices":[1],"values":[true]}`, reason: ReasonWrongType, field: "values"},
		{name: "index string", in: `{"id":"a","indices":["1"],"values":[1]}`, reason: ReasonWrongType, field: "indices"},
		{name: "vector nested", in: `{"id":"a","vector":[1,[2]]}`, reason: ReasonWrongType, field: "vector"},
		{name: "vector object", in: `{"id":"a","vector":{"0":1}}`, reason: ReasonWrongType, field: "vector"},
		{name: "duplicate id", in: `{"id":"a","id":"b","text":"x"}`, reason: ReasonDuplicateField, field: "id"},
		{name: "duplicate text", in: `{"id":"a","text":"x","text":"y"}`, reason: ReasonDuplicateField, field: "text"},
		{name: "no id", in: `{"text":"x"}`, reason: ReasonMissingID, field: "id"},
		{name: "null id", in: `{"id":null,"text":"x"}`, reason: ReasonMissingID, field: "id"},
		{name: "empty id", in: `{"id":"","text":"x"}`, reason: ReasonMissingID, field: "id"},
		{name: "id case differs", in: `{"ID":"a","text":"x"}`, reason: ReasonMissingID, field: "id"},
		{name: "id too long", dec: small, in: `{"id":"abcde","text":"x"}`, reason: ReasonIDTooLong, field: "id"},
		{name: "ts words", in: `{"id":"a","ts":"yesterday","text":"x"}`, reason: ReasonBadTimestamp, field: "ts"},
		{name: "ts date only", in: `{"id":"a","ts":"2024-05-01","text":"x"}`, reason: ReasonBadTimestamp, field: "ts"},
		{name: "empty label", in: `{"id":"a","label":"","text":"x"}`, reason: ReasonEmptyLabel, field: "label"},
		{name: "class too long", dec: small, in: `{"id":"a","label":"abcdef","text":"x"}`, reason: ReasonClassNameTooLong, field: "label"},
		{name: "numeric class too long", in: `{"id":"a","label":1e300,"text":"x"}`, reason: ReasonClassNameTooLong, field: "label"},
		{name: "unknown class", dec: classes, in: `{"id":"a","label":"eggs","text":"x"}`, reason: ReasonUnknownClass, field: "label"},
		{name: "unknown numeric class", dec: classes, in: `{"id":"a","label":2,"text":"x"}`, reason: ReasonUnknownClass, field: "label"},
		{name: "no payload", in: `{"id":"a"}`, reason: ReasonNoPayload},
		{name: "null payload", in: `{"id":"a","text":null}`, reason: ReasonNoPayload},
		{name: "text and vector", in: `{"id":"a","text":"x","vector":[1]}`, reason: ReasonMultiplePayloads},
		{name: "features and values", in: `{"id":"a","features":{},"values":[1]}`, reason: ReasonMultiplePayloads},
		{name: "empty text", in: `{"id":"a","text":""}`, reason: ReasonEmptyText, field: "text"},
		{name: "punctuation text", in: `{"id":"a","text":" ?!… -- "}`, reason: ReasonEmptyText, field: "text"},
		{name: "overflowing value", in: `{"id":"a","indices":[1],"values":[1e400]}`, reason: ReasonNonFinite, field: "values"},
		{name: "overflowing dense", in: `{"id":"a","vector":[0,-1e400]}`, reason: ReasonNonFinite, field: "vector"},
		{name: "overflowing feature", in: `{"id":"a","features":{"x":1e999}}`, reason: ReasonNonFinite, field: "features"},
		{name: "overflowing label", in: `{"id":"a","label":-1e400,"text":"x"}`, reason: ReasonNonFinite, field: "label"},
		{name: "negative index", in: `{"id":"a","indices":[-1],"values":[1]}`, reason: ReasonBadIndex, field: "indices"},
		{name: "index at dim", dec: dim100, in: `{"id":"a","indices":[100],"values":[1]}`, reason: ReasonBadIndex, field: "indices"},
		{name: "huge index", in: `{"id":"a","indices":[1e400],"values":[1]}`, reason: ReasonBadIndex, field: "indices"},
		{name: "fractional index", in: `{"id":"a","indices":[1.5],"values":[1]}`, reason: ReasonBadIndex, field: "indices"},
		{name: "repeated index", in: `{"id":"a","indices":[3,1,3],"values":[1,2,3]}`, reason: ReasonBadIndex, field: "indices"},
		{name: "negative feature key", in: `{"id":"a","features":{"-3":1}}`, reason: ReasonBadIndex, field: "features"},
		{name: "feature key at dim", dec: dim100, in: `{"id":"a","features":{"100":1}}`, reason: ReasonBadIndex, field: "features"},
		{name: "feature key overflow", in: `{"id":"a","features":{"99999999999999999999999":1}}`, reason: ReasonBadIndex, field: "features"},
		{name: "repeated feature key", in: `{"id":"a","features":{"1":1,"01":2}}`, reason: ReasonBadIndex, field: "features"},
		{name: "too many indices", dec: small, in: `{"id":"a","indices":[1,2,3,4],"values":[1,2,3,4]}`, reason: ReasonTooManyFeatures, field: "indices"},
		{name: "too many features", dec: small, in: `{"id":"a","features":{"a":1,"b":2,"c":3,"d":4}}`, reason: ReasonTooManyFeatures, field: "features"},
		{name: "too many dense", dec: small, in: `{"id":"a","vector":[1,2,3,4]}`, reason: ReasonTooManyFeatures, field: "vector"},
		{name: "fewer values", in: `{"id":"a","indices":[1,2],"values":[1]}`, reason: ReasonLengthMismatch, field: "values"},
		{name: "more values", in: `{"id":"a","indices":[1],"values":[1,2]}`, reason: ReasonLengthMismatch, field: "values"},
		{name: "indices alone", in: `{"id":"a","indices":[1]}`, reason: ReasonLengthMismatch, field: "values"},
		{name: "values alone", in: `{"id":"a","values":[1]}`, reason: ReasonLengthMismatch, field: "indices"},
		{name: "dense too short", dec: dense3, in: `{"id":"a","vector":[1,2]}`, reason: ReasonDimensionMismatch, field: "vector"},
		{name: "dense too long", dec: dense3, in: `{"id":"a","vector":[1,2,3,4]}`, reason: ReasonDimensionMismatch, field: "vector"},
		{name: "dense empty", in: `{"id":"a","vector":[]}`, reason: ReasonDimensionMismatch, field: "vector"},
	}
	runDecodeCases(t, tests)
}

func TestDecodeExampleGood(t *testing.T) {
	classes := Decoder{Limits: Limits{Classes: []string{"spam", "ham", "1"}}}
	label := func(want string) func(*testing.T, Example) {
		return func(t *testing.T, ex Example) {
			if !ex.Labeled || ex.Label != want {
				t.Errorf("label = %q (labeled %v), want %q", ex.Label, ex.Labeled, want)
			}
		}
	}
	sparse := func(idx []int32, val []float64) func(*testing.T, Example) {
		return func(t *testing.T, ex Example) {
			if !slices.Equal(ex.Vector.Indices, idx) || !slices.Equal(ex.Vector.Values, val) {
				t.Errorf("vector = %v %v, want %v %v", ex.Vector.Indices, ex.Vector.Values, idx, val)
			}
		}
	}
	tests := []decodeCase{
		{name: "label 1", in: `{"id":"a","label":1,"text":"x"}`, check: label("1")},
		{name: "label -1", in: `{"id":"a","label":-1,"text":"x"}`, check: label("-1")},
		{name: "label 1.0", in: `{"id":"a","label":1.0,"text":"x"}`, check: label("1")},
		{name: "label 1e0", in: `{"id":"a","label":1e0,"text":"x"}`, check: label("1")},
		{name: "label -0", in: `{"id":"a","label":-0,"text":"x"}`, check: label("0")},
		{name: "label 0.25", in: `{"id":"a","label":0.25,"text":"x"}`, check: label("0.25")},
		{name: "label 1e21", in: `{"id":"a","label":1e21,"text":"x"}`, check: label("1000000000000000000000")},
		{name: "string label kept", in: `{"id":"a","label":"+1","text":"x"}`, check: label("+1")},
		{name: "known class", dec: classes, in: `{"id":"a","label":"ham","text":"x"}`, check: label("ham")},
		{name: "known numeric class", dec: classes, in: `{"id":"a","label":1.0,"text":"x"}`, check: label("1")},
		{name: "null label", in: `{"id":"a","label":null,"text":"x"}`, check: func(t *testing.T, ex Example) {
			if ex.Labeled || ex.Label != "" {
				t.Errorf("label = %q (labeled %v), want none", ex.Label, ex.Labeled)
			}
		}},
		{name: "ts", in: `{"id":"a","ts":"2024-05-01T10:20:30.5+02:00","text":"x"}`, check: func(t *testing.T, ex Example) {
			want := time.Date(2024, 5, 1, 8, 20, 30, 5e8, time.UTC)
			if !ex.TS.Equal(want) {
				t.Errorf("ts = %v, want %v", ex.TS, want)
			}
		}},
		{name: "no ts", in: `{"id":"a","text":"x"}`, check: func(t *testing.T, ex Example) {
			if !ex.TS.IsZero() {
				t.Errorf("ts = %v, want zero", ex.TS)
			}
		}},
		{name: "escaped keys and id", in: `{"\u0069d":"a\"b\u00e9","text":"x"}`, check: func(t *testing.T, ex Example) {
			if ex.ID != `a"bé` {
				t.Errorf("id = %q", ex.ID)
			}
		}},
		{name: "other fields ignored", in: ` {"group":{"x":[1,"]}",{}]},"id":"a","Text":5,"text":"x"} `, check: func(t *testing.T, ex Example) {
			if ex.ID != "a" || ex.Vector.NNZ() != 1 {
				t.Errorf("example = %+v", ex)
			}
		}},
		{name: "indices sorted", in: `{"id":"a","indices":[5,0,3],"values":[1,2,-3]}`, check: sparse([]int32{0, 3, 5}, []float64{2, -3, 1})},
		{name: "integral float index", in: `{"id":"a","indices":[2.0,1e1],"values":[1,2]}`, check: sparse([]int32{2, 10}, []float64{1, 2})},
		{name: "feature indices", in: `{"id":"a","features":{"7":1.5,"0":-2,"007":0}}`, reason: ReasonBadIndex, field: "features"},
		{name: "feature index keys", in: `{"id":"a","features":{"7":1.5,"0":-2}}`, check: sparse([]int32{0, 7}, []float64{-2, 1.5})},
		{name: "empty features", in: `{"id":"a","features":{}}`, check: sparse([]int32{}, []float64{})},
		{name: "underflow is zero", in: `{"id":"a","indices":[1],"values":[1e-400]}`, check: sparse([]int32{1}, []float64{0})},
		{name: "dense kept", in: `{"id":"a","vector":[3,0,4]}`, check: func(t *testing.T, ex Example) {
			if !ex.Vector.IsDense() || !slices.Equal(ex.Vector.Values, []float64{3, 0, 4}) {
				t.Errorf("vector = %+v", ex.Vector)
			}
		}},
		{name: "dense normalized", dec: Decoder{Featurizer: Featurizer{Normalize: true}}, in: `{"id":"a","vector":[3,0,4]}`, check: func(t *testing.T, ex Example) {
			if !slices.Equal(ex.Vector.Values, []float64{0.6, 0, 0.8}) {
				t.Errorf("vector = %+v", ex.Vector)
			}
		}},
		{name: "huge values normalized", dec: Decoder{Featurizer: Featurizer{Normalize: true}}, in: `{"id":"a","indices":[0,1],"values":[1e300,1e300]}`, check: func(t *testing.T, ex Example) {
			if math.Abs(ex.Vector.Norm()-1) > 1e-12 {
				t.Errorf("norm = %v", ex.Vector.Norm())
			}
		}},
	}
	runDecodeCases(t, tests)
}

func runDecodeCases(t *testing.T, tests []decodeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := tt.dec.DecodeExample([]byte(tt.in))
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("DecodeExample(%s): %v", tt.in, err)
				}
				checkExample(t, &tt.dec, ex)
				tt.check(t, ex)
				return
			}
			checkDecodeError(t, err, tt.reason, tt.field)
		})
	}
}

func checkDecodeError(t *testing.T, err error, reason Reason, field string) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a *DecodeError with reason %s", err, reason)
	}
	if de.Reason != reason || de.Field != field {
		t.Fatalf("err = %v: reason %q field %q, want %q %q", err, de.Reason, de.Field, reason, field)
	}
	if ReasonOf(err) != reason {
		t.Fatalf("ReasonOf = %q, want %q", ReasonOf(err), reason)
	}
}

// checkExample asserts what every decoded example must satisfy.
func checkExample(t *testing.T, d *Decoder, ex Example) {
	t.Helper()
	lim := d.Limits.withDefaults()
	if ex.ID == "" || len(ex.ID) > lim.MaxIDBytes {
		t.Fatalf("id %q is empty or longer than %d", ex.ID, lim.MaxIDBytes)
	}
	if ex.Labeled != (ex.Label != "") || len(ex.Label) > lim.MaxClassNameBytes {
		t.Fatalf("label %q labeled %v", ex.Label, ex.Labeled)
	}
	if ex.Labeled && lim.Classes != nil && !slices.Contains(lim.Classes, ex.Label) {
		t.Fatalf("label %q not among %q", ex.Label, lim.Classes)
	}
	dim := d.Featurizer.dim()
	if ex.Vector.IsDense() {
		dim = d.Featurizer.DenseDim
		if n := len(ex.Vector.Values); n == 0 || n > lim.MaxFeatures && dim == 0 {
			t.Fatalf("dense vector of %d values", n)
		}
	}
	if err := ex.Vector.Validate(dim); err != nil {
		t.Fatalf("vector does not validate for dim %d: %v", dim, err)
	}
}

func TestDecodeLabel(t *testing.T) {
	classes := Decoder{Limits: Limits{Classes: []string{"spam", "ham"}, MaxIDBytes: 3}}
	tests := []struct {
		name   string
		dec    Decoder
		in     string
		want   Label
		reason Reason
		field  string
	}{
		{name: "string", in: `{"id":"a","label":"spam"}`, want: Label{"a", "spam"}},
		{name: "number", in: `{"id":"a","label":-1.0}`, want: Label{"a", "-1"}},
		{name: "extra fields", in: `{"label":"1","id":"a","text":5,"text":6}`, want: Label{"a", "1"}},
		{name: "known class", dec: classes, in: `{"id":"a","label":"ham"}`, want: Label{"a", "ham"}},
		{name: "malformed", in: `{"id":"a",`, reason: ReasonMalformedJSON},
		{name: "not object", in: `["a","b"]`, reason: ReasonWrongType},
		{name: "no label", in: `{"id":"a"}`, reason: ReasonMissingLabel, field: "label"},
		{name: "null label", in: `{"id":"a","label":null}`, reason: ReasonMissingLabel, field: "label"},
		{name: "empty label", in: `{"id":"a","label":""}`, reason: ReasonEmptyLabel, field: "label"},
		{name: "bool label", in: `{"id":"a","label":false}`, reason: ReasonWrongType, field: "label"},
		{name: "unknown class", dec: classes, in: `{"id":"a","label":"eggs"}`, reason: ReasonUnknownClass, field: "label"},
		{name: "no id", in: `{"label":"spam"}`, reason: ReasonMissingID, field: "id"},
		{name: "id too long", dec: classes, in: `{"id":"abcd","label":"spam"}`, reason: ReasonIDTooLong, field: "id"},
		{name: "duplicate label", in: `{"id":"a","label":"x","label":"y"}`, reason: ReasonDuplicateField, field: "label"},
		{name: "overflow", in: `{"id":"a","label":1e400}`, reason: ReasonNonFinite, field: "label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.dec.DecodeLabel([]byte(tt.in))
			if tt.reason != "" {
				checkDecodeError(t, err, tt.reason, tt.field)
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("DecodeLabel(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDecodeErrorMessage(t *testing.T) {
	var d Decoder
	_, err := d.DecodeExample([]byte(`{"id":"ex-1","vector":[1,"x"]}`))
	want := `decode example "ex-1": vector: wrong_type: value is a string, want a number`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// TestDecodeEmptyMessage: a record without a value, a tombstone for one,
// is said to be empty rather than "unexpected end of JSON input".
func TestDecodeEmptyMessage(t *testing.T) {
	var d Decoder
	_, exErr := d.DecodeExample(nil)
	_, labelErr := d.DecodeLabel([]byte{})
	for _, err := range []error{exErr, labelErr} {
		checkDecodeError(t, err, ReasonMalformedJSON, "")
		if !strings.Contains(err.Error(), "message is empty") {
			t.Fatalf("err = %v, want it to say the message is empty", err)
		}
	}
}

// TestDecodeSharesNoMemory checks that an example stays intact when the
// caller reuses the message buffer, as Kafka clients may.
func TestDecodeSharesNoMemory(t *testing.T) {
	var d Decoder
	for _, in := range []string{
		`{"id":"abc","label":"spam","indices":[1,2],"values":[3,4]}`,
		`{"id":"abc","label":"spam","vector":[3,4]}`,
	} {
		b := []byte(in)
		ex, err := d.DecodeExample(b)
		if err != nil {
			t.Fatal(err)
		}
		want := Example{ID: ex.ID, Label: ex.Label, Labeled: true, Vector: ex.Vector.Clone()}
		for k := range b {
			b[k] = '9'
		}
		if ex.ID != want.ID || ex.Label != want.Label || !slices.Equal(ex.Vector.Values, want.Vector.Values) {
			t.Fatalf("example changed with its input: %+v, want %+v", ex, want)
		}
	}
}

func TestReasonsAreDistinct(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range Reasons() {
		if r == "" || seen[r] || strings.ToLower(string(r)) != string(r) {
			t.Fatalf("reason %q is empty, repeated or not lower case", r)
		}
		seen[r] = true
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		dec  Decoder
		ok   bool
	}{
		{"zero", Decoder{}, true},
		{"classes", Decoder{Limits: Limits{Classes: []string{"a", "b"}}}, true},
		{"negative limit", Decoder{Limits: Limits{MaxIDBytes: -1}}, false},
		{"empty classes", Decoder{Limits: Limits{Classes: []string{}}}, false},
		{"repeated class", Decoder{Limits: Limits{Classes: []string{"a", "a"}}}, false},
		{"empty class", Decoder{Limits: Limits{Classes: []string{""}}}, false},
		{"long class", Decoder{Limits: Limits{MaxClassNameBytes: 2, Classes: []string{"abc"}}}, false},
		{"negative dim", Decoder{Featurizer: Featurizer{Dim: -1}}, false},
		{"huge dim", Decoder{Featurizer: Featurizer{Dim: 1<<31 + 1}}, false},
		{"max dim", Decoder{Featurizer: Featurizer{Dim: 1 << 31}}, true},
		{"negative dense dim", Decoder{Featurizer: Featurizer{DenseDim: -3}}, false},
	}
	for _, tt := range tests {
		if err := tt.dec.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
