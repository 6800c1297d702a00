package ingest

import (
	"strings"
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

// names returns the names of the payload's hashed indices; nil for
// payloads without any.
func (f Featurizer) names(p *exampleFields) Names {
	switch {
	case p.text != nil && !isNull(p.text):
		text, err := stringContent(p.text)
		if err != nil {
			return nil
		}
		return f.TextNames(string(text))
	case p.features != nil && !isNull(p.features):
		names := Names{}
		_ = eachMember(p.features, func(key, _ []byte) error {
			name, err := stringContent(key)
			if err == nil && !isIndexKey(name) {
				j, _ := f.nameTerm(name)
				names.add(j, string(name))
			}
			return nil
		})
		return names
	}
	return nil
}

// TextNames returns the index of every unigram and bigram of s, as Text
// hashes them, with the lowercased terms that hash there.
func (f Featurizer) TextNames(s string) Names {
	dim := uint64(f.dim())
	names := Names{}
	var prev, h uint64
	var prevTok string
	var tok strings.Builder
	havePrev, inToken := false, false
	end := func() {
		cur := tok.String()
		names.add(reduce(mix(h), dim), cur)
		if havePrev {
			names.add(reduce(bigram(prev, h), dim), prevTok+" "+cur)
		}
		prev, prevTok, havePrev, inToken = h, cur, true, false
		tok.Reset()
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
				tok.WriteByte(c)
			}
		} else if word = isWordRune(r); word {
			if !inToken {
				h, inToken = tokenSeed(), true
			}
			lower := unicode.ToLower(r)
			h = hashRune(h, lower)
			tok.WriteRune(lower)
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
