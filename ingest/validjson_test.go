package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

var validJSONSeeds = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5e`, `1e+`, `1E-7`, `-12.5e+30`, `1x`, `[1 2]`, `[1,]`, `[,1]`, `{}`, `[]`,
	` { } `, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`, `"x`, `"\"`, `"\u12"`, `"\u12g4"`, `"\uABCD\/\b"`, `"\x"`,
	"\"\x01\"", "\"\xff\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", "\xef\xbb\xbf{}", "{}\x00", `true`, `tru`, `truex`, `nul`, `null `,
	`false`, `[true,false,null,{"a":[{}]}]`, `{"a":{"b":[1,{"c":"d"}]}}`, `]`, `}`, `[}`, `{]`, `[[[]]]`, `[[[]]`, `"é"`, `é`,
}

// TestValidJSONMatchesEncodingJSON: validJSON is json.Valid and utf8.Valid
// in one pass, on the seeds and at encoding/json's nesting bound.
func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	cases := append([]string(nil), validJSONSeeds...)
	for _, depth := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		cases = append(cases, strings.Repeat("[", depth)+strings.Repeat("]", depth),
			strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth))
	}
	for _, c := range cases {
		b := []byte(c)
		if got, want := validJSON(b), json.Valid(b) && utf8.Valid(b); got != want {
			t.Errorf("validJSON(%.40q) = %v, want %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range append(validJSONSeeds, exampleSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b) && utf8.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, want %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON checks example messages of 2 KiB of text, by
// validJSON and by the two passes it stands for.
func BenchmarkValidJSON(b *testing.B) {
	texts := benchTexts(64, 2048)
	msgs := make([][]byte, len(texts))
	for k, s := range texts {
		msgs[k], _ = json.Marshal(map[string]any{"id": fmt.Sprintf("ex-%d", k), "label": "spam", "text": s})
	}
	for _, c := range []struct {
		name  string
		valid func([]byte) bool
	}{
		{"validJSON", validJSON},
		{"json.Valid+utf8.Valid", func(b []byte) bool { return json.Valid(b) && utf8.Valid(b) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(msgs[0])))
			i := 0
			for b.Loop() {
				if !c.valid(msgs[i%len(msgs)]) {
					b.Fatal("an example message is not valid")
				}
				i++
			}
		})
	}
}
