package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Pointer is a JSON Pointer (RFC 6901) that picks one value out of a
// message, such as /post_id or /author/followers. Its zero value points at
// nothing: the field it stands for is not in the messages.
type Pointer struct {
	text   string
	tokens []string // unescaped reference tokens
}

// ParsePointer parses a JSON Pointer. The empty string, which RFC 6901
// reads as the whole document, is refused: a field is always inside the
// message.
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, errors.New("a JSON Pointer to a field is not empty")
	}
	if s[0] != '/' {
		return Pointer{}, fmt.Errorf("JSON Pointer %q does not start with /", s)
	}
	tokens := strings.Split(s[1:], "/")
	for k, tok := range tokens {
		if !strings.Contains(tok, "~") {
			continue
		}
		for i := 0; i < len(tok); i++ {
			if tok[i] == '~' && (i+1 == len(tok) || tok[i+1] != '0' && tok[i+1] != '1') {
				return Pointer{}, fmt.Errorf("JSON Pointer %q: ~ is not followed by 0 or 1", s)
			}
		}
		tokens[k] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return Pointer{text: s, tokens: tokens}, nil
}

// MustPointer is ParsePointer for pointers written in the program.
func MustPointer(s string) Pointer {
	p, err := ParsePointer(s)
	if err != nil {
		panic(err)
	}
	return p
}

// String returns the pointer as written; "" for the zero Pointer.
func (p Pointer) String() string { return p.text }

// IsZero reports whether p points at nothing.
func (p Pointer) IsZero() bool { return p.text == "" }

// lookup returns the raw JSON value that p points at inside the JSON
// value doc (which validJSON accepted), or nil when it is absent: a member
// or an element that is not there, or null on the way. A member named
// twice on the way is a duplicate_field; a value on the way that is
// neither an object nor an array is wrong_type. It allocates only for a
// member name with escapes.
func (p Pointer) lookup(doc []byte) ([]byte, error) {
	cur := doc
	for depth, tok := range p.tokens {
		if len(cur) == 0 || isNull(cur) {
			return nil, nil
		}
		var next []byte
		var err error
		switch cur[0] {
		case '{':
			next, err = memberNamed(cur, tok)
		case '[':
			next = element(cur, tok)
		default:
			err = decodeErr(ReasonWrongType, p.text, "%s is a %s, want an object or an array", p.prefix(depth), kind(cur))
		}
		if err != nil {
			if de, ok := err.(*DecodeError); ok && de.Field == "" {
				de.Field = p.text
				de.Err = fmt.Errorf("%s %w", p.prefix(depth+1), de.Err)
			}
			return nil, err
		}
		if next == nil {
			return nil, nil
		}
		cur = next
	}
	return cur, nil
}

// prefix returns the pointer to the value reached after n tokens.
func (p Pointer) prefix(n int) string {
	if n == 0 {
		return "the message"
	}
	i := 0
	for range n {
		j := strings.IndexByte(p.text[i+1:], '/')
		if j < 0 {
			return p.text
		}
		i += j + 1
	}
	return p.text[:i]
}

// memberNamed returns the value of the member name of the object obj, nil when
// there is none; a name given twice is a duplicate_field.
func memberNamed(obj []byte, name string) ([]byte, error) {
	var found []byte
	err := eachMember(obj, func(key, val []byte) error {
		if !keyIs(key, name) {
			return nil
		}
		if found != nil {
			return decodeErr(ReasonDuplicateField, "", "appears more than once")
		}
		found = val
		return nil
	})
	return found, err
}

// keyIs reports whether the key literal (quotes included) names name.
func keyIs(key []byte, name string) bool {
	inner := key[1 : len(key)-1]
	if len(inner) == len(name) && string(inner) == name {
		return true
	}
	if len(inner) < len(name) || bytes.IndexByte(inner, '\\') < 0 {
		return false // escapes only lengthen a name
	}
	s, err := stringContent(key)
	return err == nil && string(s) == name
}

// element returns the element of the array arr at the index tok, nil when
// tok is not an index (RFC 6901: digits without a leading zero) or past
// the end.
func element(arr []byte, tok string) []byte {
	if tok == "" || len(tok) > 1 && tok[0] == '0' || len(tok) > 9 {
		return nil
	}
	n := 0
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return nil
		}
		n = 10*n + int(tok[i]-'0')
	}
	var found []byte
	k := 0
	eachElement(arr, func(val []byte) error { //nolint:errcheck // the callback returns only errFound
		if k == n {
			found = val
			return errFound
		}
		k++
		return nil
	})
	return found
}

// errFound stops a scan once it has what it looked for.
var errFound = errors.New("found")
