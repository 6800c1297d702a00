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
			names := ex.Names
			if ex.Text != "" {
				names = d.Featurizer.TextNames(ex.Text)
			}
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
					t.Errorf("%q not named; names %v", term, ex.Names)
				}
			}
			for _, j := range ex.Vector.Indices {
				if _, ok := names[j]; !ok && tc.name != "features" {
					t.Errorf("index %d of the vector has no name", j)
				}
			}
			plain, _ := (&Decoder{Featurizer: Featurizer{Dim: tc.dim}}).DecodeExample([]byte(tc.raw))
			if plain.Names != nil || plain.Text != "" {
				t.Errorf("names without KeepNames: %v %q", plain.Names, plain.Text)
			}
			if ex.Text != "" && len(ex.Vector.Indices) > 1 {
				j := ex.Vector.Indices[1]
				only := d.Featurizer.TextNames(ex.Text, j)
				if len(only) != 1 || !slices.Equal(only[j], names[j]) {
					t.Errorf("names of index %d alone: %v, want %v", j, only, names[j])
				}
			}
		})
	}
}

// TestMappedNamesCoverTheVector: a message read by a mapping, its text
// in two fields hashed with named features, names every index its
// vector sets: the terms of both fields, the bigram across them, the
// features object's names and the feature fields'.
func TestMappedNamesCoverTheVector(t *testing.T) {
	raw := `{"post_id": 78, "title": "Cheap pills", "body": "Order today", "author": {"followers": 12, "stats": {"posts": 3}}}`
	d := Decoder{Examples: moderation(), KeepNames: true}
	ex, err := d.DecodeExample([]byte(raw))
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
	for _, term := range []string{"cheap", "cheap pills", "pills order", "today", "followers", "posts"} {
		if !named[term] {
			t.Errorf("%q not named; names %v", term, names)
		}
	}
	for _, j := range ex.Vector.Indices {
		if _, ok := names[j]; !ok {
			t.Errorf("index %d of the vector has no name", j)
		}
	}
	j := ex.Vector.Indices[0]
	if only := d.Featurizer.ExampleNames(ex, j); !slices.Equal(only[j], names[j]) {
		t.Errorf("names of index %d alone: %v, want %v", j, only[j], names[j])
	}
	plain, _ := (&Decoder{Examples: moderation()}).DecodeExample([]byte(raw))
	if plain.Names != nil || plain.Text != "" {
		t.Errorf("names without KeepNames: %v %q", plain.Names, plain.Text)
	}
}
