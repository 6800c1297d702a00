package ingest

import (
	"slices"
	"testing"
)

// TestNamesCoverTheVector: the names of a decoded example are exactly
// the hashed indices its vector sets, and each names the terms that
// hash there (a small Dim makes terms collide).
func TestNamesCoverTheVector(t *testing.T) {
	for _, tc := range []struct {
		name string
		dim  int
		raw  string
		want map[string]bool // terms that must be named
	}{
		{"text", 0, `{"id":"a","text":"Free MONEY now, free money! Ünïcode naïve"}`, map[string]bool{"free": true, "money": true, "free money": true, "money now": true, "ünïcode naïve": true}},
		{"colliding text", 7, `{"id":"a","text":"one two three four five six seven eight"}`, map[string]bool{"one": true, "seven eight": true}},
		{"features", 0, `{"id":"a","features":{"height":1.5,"width":2,"17":3}}`, map[string]bool{"height": true, "width": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decoder{Featurizer: Featurizer{Dim: tc.dim}, KeepNames: true}
			ex, err := d.DecodeExample([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			named := map[string]bool{}
			for j, terms := range ex.Names {
				if !slices.Contains(ex.Vector.Indices, j) {
					t.Errorf("index %d named %q is not in the vector %v", j, terms, ex.Vector.Indices)
				}
				for _, term := range terms {
					named[term] = true
				}
			}
			for term := range tc.want {
				if !named[term] {
					t.Errorf("%q not named; names %v", term, ex.Names)
				}
			}
			for _, j := range ex.Vector.Indices {
				if _, ok := ex.Names[j]; !ok && tc.name != "features" {
					t.Errorf("index %d of the vector has no name", j)
				}
			}
			plain, _ := (&Decoder{Featurizer: Featurizer{Dim: tc.dim}}).DecodeExample([]byte(tc.raw))
			if plain.Names != nil {
				t.Errorf("names without KeepNames: %v", plain.Names)
			}
		})
	}
}
