package ingest

import (
	"encoding/json"
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
