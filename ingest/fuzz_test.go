package ingest

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"
)

// fuzzDecoders are the configurations fuzzing runs under: the defaults,
// limits small enough that the fuzzer reaches every one of them, and -1 as
// the LIBSVM label of unlabeled rows.
func fuzzDecoders() []Decoder {
	return []Decoder{
		{},
		{
			Limits: Limits{
				MaxMessageBytes: 512, MaxLineBytes: 256, MaxIDBytes: 8, MaxTextBytes: 64,
				MaxFeatures: 4, MaxClassNameBytes: 4, Classes: []string{"1", "-1", "spam"},
			},
			Featurizer: Featurizer{Dim: 16, DenseDim: 3, Signed: true, Normalize: true},
		},
		{Unlabeled: UnlabeledLabel{Rule: UnlabeledMark, Value: -1}},
	}
}

var exampleSeeds = []string{
	`{"id":"a","ts":"2024-05-01T10:20:30Z","label":"spam","text":"Hello, World! naïve café"}`,
	`{"id":"b","label":1,"features":{"len":12,"3":1.5,"x y":-2}}`,
	`{"id":"c","label":-1.0,"indices":[5,0,3],"values":[1,2,-3]}`,
	`{"id":"d","vector":[0.5,0.25,1e-3]}`,
	`{"id":"e","label":null,"group":{"x":[1,"]}",{}]},"text":"x"}`,
	`{"\u0069d":"f\"\u00e9","text":"a\nb\tc"}`,
	`{"id":"g","indices":[1e400],"values":[1e400]}`,
	`{"id":"h","features":{"-1":1,"01":2,"1":3}}`,
	`{"id":5,"text":5,"values":"x"}`,
	`{"id":"i","text":"x","text":"y"}`,
	`{"id":"j","ts":"yesterday","label":true}`,
	`[{"id":"k"}]`, `null`, `"x"`, `{`, ``, "{\"id\":\"\xff\"}",
	`{"id":"l","vector":[]}`, `{"id":"m","indices":[1,1],"values":[1,2]}`,
}

func FuzzDecodeExample(f *testing.F) {
	for k, s := range exampleSeeds {
		f.Add([]byte(s), uint8(k))
	}
	decoders := fuzzDecoders()
	f.Fuzz(func(t *testing.T, b []byte, config uint8) {
		d := &decoders[int(config)%len(decoders)]
		ex, err := d.DecodeExample(b)
		if err != nil {
			checkFuzzError(t, err)
			if !reflect.DeepEqual(ex, Example{}) {
				t.Fatalf("error %v came with example %+v", err, ex)
			}
			return
		}
		if !utf8.Valid(b) || !json.Valid(b) {
			t.Fatalf("decoded input that is not valid UTF-8 JSON: %q", b)
		}
		checkExample(t, d, ex)
		checkAgainstEncodingJSON(t, d, b, ex)
		if d.Featurizer.Normalize && ex.Vector.NNZ() > 0 {
			if n := ex.Vector.Norm(); n != 0 && math.Abs(n-1) > 1e-9 {
				t.Fatalf("normalized vector has norm %v", n)
			}
		}
		again, err := d.DecodeExample(slices.Clone(b))
		if err != nil || !reflect.DeepEqual(again, ex) {
			t.Fatalf("decoding twice gave %+v, %v and %+v", ex, err, again)
		}
	})
}

func FuzzDecodeLabel(f *testing.F) {
	for k, s := range []string{
		`{"id":"a","label":"spam"}`, `{"id":"a","label":-1}`, `{"id":"a","label":1.0e0}`,
		`{"label":"x"}`, `{"id":"a"}`, `{"id":"a","label":""}`, `{"id":"a","label":[1]}`,
		`{"id":"a","label":1e400}`, `{"id":"a","label":"x","label":"y"}`, `{"id":"a","label":"\ud800"}`,
	} {
		f.Add([]byte(s), uint8(k))
	}
	decoders := fuzzDecoders()
	f.Fuzz(func(t *testing.T, b []byte, config uint8) {
		d := &decoders[int(config)%len(decoders)]
		l, err := d.DecodeLabel(b)
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		lim := d.Limits.withDefaults()
		switch {
		case l.ID == "" || len(l.ID) > lim.MaxIDBytes:
			t.Fatalf("id %q empty or too long", l.ID)
		case l.Label == "" || len(l.Label) > lim.MaxClassNameBytes:
			t.Fatalf("label %q empty or too long", l.Label)
		case lim.Classes != nil && !slices.Contains(lim.Classes, l.Label):
			t.Fatalf("label %q not among %q", l.Label, lim.Classes)
		}
	})
}

func FuzzLIBSVMLine(f *testing.F) {
	for k, s := range []string{
		"+1 1:0.5 3:-1.25 qid:7 10:2 # comment", "-1 2:1e-3 4:4", "0 1:1", "2.0", "1\t4:1\t2:3\r",
		"spam 1:1", "1 0:1", "1 3:1 3:2", "1 x:1", "1 3:nan", "1 3:1e999", "1 3", "", "# only",
		"1 99999999999999999999:1", "-0 1:-0",
	} {
		f.Add([]byte(s), uint8(k))
	}
	decoders := fuzzDecoders()
	f.Fuzz(func(t *testing.T, line []byte, config uint8) {
		d := &decoders[int(config)%len(decoders)]
		ex, err := d.DecodeLIBSVMLine(line, "line-1")
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		checkExample(t, d, ex)
		if ex.Vector.IsDense() || ex.Vector.NNZ() > d.Limits.withDefaults().MaxFeatures {
			t.Fatalf("a LIBSVM line gave %+v", ex.Vector)
		}
		if x, err := strconv.ParseFloat(ex.Label, 64); ex.Labeled && err == nil && d.Unlabeled.marks(x) {
			t.Fatalf("label %s marks an unlabeled row under %v, yet was kept", ex.Label, d.Unlabeled)
		}
	})
}

// FuzzText checks the featurizer against the slow reference on any string,
// including invalid UTF-8.
func FuzzText(f *testing.F) {
	for _, s := range []string{"Hello, World!", "new york new york", "nai\u0308ve ÉCOLE", "東京タワー 2024", "\xff\xfe a", ""} {
		f.Add(s, uint16(0), false)
		f.Add(s, uint16(7), true)
	}
	// Signed terms on one index that cancel: a rounding error in the sum
	// must not become the whole vector.
	f.Add("g S#02101Ba%N A1y9b!H 2 s\"3 s!9Y%#n\"J!801C8 K\"x1C U!2(y#  h!Y%9 n A h!s%Z1#JB0", uint16(1), true)
	f.Fuzz(func(t *testing.T, s string, dim uint16, signed bool) {
		fz := Featurizer{Dim: int(dim), Signed: signed}
		got := fz.Text(s)
		if err := got.Validate(fz.dim()); err != nil || got.IsDense() {
			t.Fatalf("Text(%q) invalid: %v", s, err)
		}
		want := referenceText(fz, s)
		if got.NNZ() != len(want) {
			t.Fatalf("Text(%q) has %d entries, reference %d", s, got.NNZ(), len(want))
		}
		for k, j := range got.Indices {
			if math.Abs(got.Values[k]-want[j]) > 1e-9 {
				t.Fatalf("Text(%q)[%d] = %v, reference %v", s, j, got.Values[k], want[j])
			}
		}
	})
}

// checkAgainstEncodingJSON checks the decoder's own scanning and unescaping
// against encoding/json on a message it accepted.
func checkAgainstEncodingJSON(t *testing.T, d *Decoder, b []byte, ex Example) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("encoding/json rejects an accepted message: %v", err)
	}
	if m["id"] != ex.ID {
		t.Fatalf("id = %q, encoding/json says %q", ex.ID, m["id"])
	}
	if label, ok := m["label"].(string); ok && label != ex.Label {
		t.Fatalf("label = %q, encoding/json says %q", ex.Label, label)
	}
	if text, ok := m["text"].(string); ok {
		if want := d.Featurizer.Text(text); !reflect.DeepEqual(ex.Vector, want) {
			t.Fatalf("text vector = %+v, Featurizer.Text of encoding/json's text gives %+v", ex.Vector, want)
		}
	}
}

func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	r := ReasonOf(err)
	if !slices.Contains(Reasons(), r) {
		t.Fatalf("error %v has reason %q, not one of Reasons()", err, r)
	}
}
