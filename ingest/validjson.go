package ingest

import "unicode/utf8"

// maxNesting is encoding/json's bound on nested arrays and objects, which
// json.Valid enforces.
const maxNesting = 10000

// validJSON reports whether b is one JSON value (with white space around
// it) whose strings are valid UTF-8: json.Valid(b) && utf8.Valid(b) in one
// pass instead of two, the first through encoding/json's byte-at-a-time
// state machine, which showed in profiles of a drain (BenchmarkValidJSON
// times both). Outside strings valid JSON is ASCII, so checking the
// strings checks all of b.
func validJSON(b []byte) bool {
	// open holds, for each nesting level, whether it is an object.
	var stack [64]bool
	open := stack[:0]
	i := skipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(open) == maxNesting {
				return false
			}
			open = append(open, c == '{')
			i = skipSpace(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				open = open[:len(open)-1]
				i++
				break
			}
			if c == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = stringLit(b, i); i < 0 {
				return false
			}
		case c == '-' || '0' <= c && c <= '9':
			if i = number(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// A value ended before b[i]: close what it ends, or go on to the
		// next element or member.
		for {
			i = skipSpace(b, i)
			if len(open) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			object := open[len(open)-1]
			switch {
			case b[i] == ',':
				i = skipSpace(b, i+1)
				if object {
					if i = member(b, i); i < 0 {
						return false
					}
				}
			case object && b[i] == '}' || !object && b[i] == ']':
				open = open[:len(open)-1]
				i++
				continue
			default:
				return false
			}
			break
		}
	}
}

// member checks the key and colon of an object member at b[i] and
// returns where its value starts, -1 if they are not valid.
func member(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = stringLit(b, i); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// stringLit checks the string literal at b[i] and returns the index past
// it, -1 if it is not valid JSON or not valid UTF-8.
func stringLit(b []byte, i int) int {
	for i++; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return -1
			}
			i += n
		}
	}
	return -1
}

// number checks the number at b[i] and returns the index past it, -1 if it
// is not a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// literal checks that b[i:] starts with lit and returns the index past it,
// -1 if it does not.
func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
