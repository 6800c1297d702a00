package ingest

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// Names maps the indices of an example's vector to what set them: the
// words and bigrams of a text ("a b"), or the feature names of a features
// payload. Several terms share an index where their hashes collide. An
// index given as such (a digits key, indices/values, a vector) has no
// name: the index is its name.
type Names map[int32][]string

// Add records that term set index j.
func (n Names) add(j int32, term string) {
	for _, t := range n[j] {
		if t == term {
			return
		}
	}
	n[j] = append(n[j], term)
}

// keepNames keeps in ex what names its hashed indices: the text of a
// text payload (named on demand by TextNames, which costs more than the
// rest of decoding), the names of a features payload.
func (f Featurizer) keepNames(p *exampleFields, ex *Example) {
	switch {
	case p.text != nil && !isNull(p.text):
		if text, err := stringContent(p.text); err == nil {
			ex.Text = string(text)
		}
	case p.features != nil && !isNull(p.features):
		ex.Names = f.featureNames(p.features)
	}
}

// keepMappedNames keeps in ex what names the hashed indices of a mapped
// message doc: its text fields joined as they were hashed, and the names of
// its features object and of the feature fields present.
func (f Featurizer) keepMappedNames(m *ExampleMapping, p *mappedFields, doc []byte, ex *Example) {
	var text []byte
	for k, raw := range p.texts {
		s, err := stringContent(raw)
		if err != nil {
			return
		}
		if k > 0 {
			text = append(text, '\n')
		}
		text = append(text, s...)
	}
	ex.Text = string(text)
	names := Names{}
	if p.features != nil {
		names = f.featureNames(p.features)
	}
	for _, ff := range m.Fields {
		if raw, err := ff.At.lookup(doc); err == nil && raw != nil && !isNull(raw) && !isIndexKey([]byte(ff.Name)) {
			j, _ := f.nameTerm([]byte(ff.Name))
			names.add(j, ff.Name)
		}
	}
	if len(names) > 0 {
		ex.Names = names
	}
}

// ExampleNames returns the names of ex's hashed indices that the decoder
// kept (Decoder.KeepNames): its features' names and its text's terms;
// with only set, the text's terms of those indices only, since naming a
// text costs more than decoding it.
func (f Featurizer) ExampleNames(ex Example, only ...int32) Names {
	if ex.Text == "" {
		return ex.Names
	}
	names := f.TextNames(ex.Text, only...)
	for j, terms := range ex.Names {
		for _, t := range terms {
			names.add(j, t)
		}
	}
	return names
}

// featureNames returns the names of a features payload's hashed indices.
func (f Featurizer) featureNames(features []byte) Names {
	{
		names := Names{}
		_ = eachMember(features, func(key, _ []byte) error {
			name, err := stringContent(key)
			if err == nil && !isIndexKey(name) {
				j, _ := f.nameTerm(name)
				names.add(j, string(name))
			}
			return nil
		})
		return names
	}
}

// TextNames returns the index of every unigram and bigram of s, as Text
// hashes them, with the lowercased terms that hash there; with only set,
// of those indices only.
func (f Featurizer) TextNames(s string, only ...int32) Names {
	dim := uint64(f.dim())
	names := Names{}
	wanted := func(j int32) bool { return len(only) == 0 || slices.Contains(only, j) }
	var prev, h uint64
	var tok, prevTok []byte // lowercased; a string is made of a term named only
	havePrev, inToken := false, false
	end := func() {
		if j := reduce(mix(h), dim); wanted(j) {
			names.add(j, string(tok))
		}
		if j := reduce(bigram(prev, h), dim); havePrev && wanted(j) {
			names.add(j, string(prevTok)+" "+string(tok))
		}
		prev, havePrev, inToken = h, true, false
		prevTok, tok = append(prevTok[:0], tok...), tok[:0]
	}
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		i += n
		word := false
		if r < utf8.RuneSelf {
			c := byte(r)
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if word = 'a' <= c && c <= 'z' || '0' <= c && c <= '9'; word {
				if !inToken {
					h, inToken = tokenSeed(), true
				}
				h = (h ^ uint64(c)) * fnvPrime
				tok = append(tok, c)
			}
		} else if word = isWordRune(r); word {
			if !inToken {
				h, inToken = tokenSeed(), true
			}
			lower := unicode.ToLower(r)
			h = hashRune(h, lower)
			tok = utf8.AppendRune(tok, lower)
		}
		if !word && inToken {
			end()
		}
	}
	if inToken {
		end()
	}
	return names
}
