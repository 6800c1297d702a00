package ingest

import (
	"slices"
	"testing"
)

// TestNamesCoverTheVector: the names of a decoded example are exactly
// the hashed indices its vector sets, and each names the terms that
// hash there (a small Dim makes terms collide), in the default schema
// and through a mapping.
func TestNamesCoverTheVector(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dim     int
		mapping *ExampleMapping
		raw     string
		want    map[string]bool // terms that must be named
	}{
		{"text", 0, nil, `{"id":"a","text":"Free MONEY now, free money! Ünïcode naïve"}`, map[string]bool{"free": true, "money": true, "free money": true, "money now": true, "ünïcode naïve": true}},
		{"colliding text", 7, nil, `{"id":"a","text":"one two three four five six seven eight"}`, map[string]bool{"one": true, "seven eight": true}},
		{"features", 0, nil, `{"id":"a","features":{"height":1.5,"width":2,"17":3}}`, map[string]bool{"height": true, "width": true}},
		// Text in two fields hashed with named features: the bigram across
		// the fields, the features object's names and the feature fields'.
		{"mapping", 0, moderation(), `{"post_id": 78, "title": "Cheap pills", "body": "Order today", "author": {"followers": 12, "stats": {"posts": 3}}}`,
			map[string]bool{"cheap": true, "cheap pills": true, "pills order": true, "today": true, "followers": true, "posts": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decoder{Featurizer: Featurizer{Dim: tc.dim}, Examples: tc.mapping, KeepNames: true}
			ex, err := d.DecodeExample([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			names := d.Featurizer.ExampleNames(ex)
			named := map[string]bool{}
			for j, terms := range names {
				if !slices.Contains(ex.Vector.Indices, j) {
					t.Errorf("index %d named %q is not in the vector %v", j, terms, ex.Vector.Indices)
				}
				for _, term := range terms {
					named[term] = true
				}
			}
			for term := range tc.want {
				if !named[term] {
					t.Errorf("%q not named; names %v", term, names)
				}
			}
			for _, j := range ex.Vector.Indices {
				if _, ok := names[j]; !ok && tc.name != "features" {
					t.Errorf("index %d of the vector has no name", j)
				}
			}
			plain, _ := (&Decoder{Featurizer: Featurizer{Dim: tc.dim}, Examples: tc.mapping}).DecodeExample([]byte(tc.raw))
			if plain.Names != nil || plain.Text != "" {
				t.Errorf("names without KeepNames: %v %q", plain.Names, plain.Text)
			}
			if len(ex.Vector.Indices) > 1 {
				j := ex.Vector.Indices[1]
				if only := d.Featurizer.ExampleNames(ex, j); !slices.Equal(only[j], names[j]) {
					t.Errorf("names of index %d alone: %v, want %v", j, only[j], names[j])
				}
			}
		})
	}
}
