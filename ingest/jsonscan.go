package ingest

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The scanners in this file walk JSON that validJSON has already accepted,
// so they check the types the schema asks for, never the syntax. They are
// iterative (no recursion on nesting depth) and allocate nothing; indices
// are bounds-checked anyway, so a caller's mistake cannot turn into a panic.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the string literal starting at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		return compositeEnd(b, i)
	}
	for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

func compositeEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return len(b)
}

// eachMember calls fn with the key literal (quotes included) and the value
// of each member of the object obj, in document order.
func eachMember(obj []byte, fn func(key, val []byte) error) error {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		k := stringEnd(obj, i)
		key := obj[i:k]
		i = skipSpace(obj, skipSpace(obj, k)+1) // past the colon
		j := valueEnd(obj, i)
		if i >= j {
			return nil
		}
		if err := fn(key, obj[i:j]); err != nil {
			return err
		}
		i = skipSpace(obj, j)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return nil
}

// eachElement calls fn with each element of the array arr, in order.
func eachElement(arr []byte, fn func(val []byte) error) error {
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		j := valueEnd(arr, i)
		if i >= j {
			return nil
		}
		if err := fn(arr[i:j]); err != nil {
			return err
		}
		i = skipSpace(arr, j)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return nil
}

// countElements returns the number of elements of a flat array of scalars,
// to size the slice it is decoded into; nested values make it an overcount.
func countElements(arr []byte) int {
	if i := skipSpace(arr, 1); i >= len(arr) || arr[i] == ']' {
		return 0
	}
	return bytes.Count(arr, []byte{','}) + 1
}

// kind names the JSON type of a value for error messages.
func kind(val []byte) string {
	if len(val) == 0 {
		return "nothing"
	}
	switch val[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func isNull(val []byte) bool { return len(val) == 4 && string(val) == "null" }

func isNumber(val []byte) bool {
	return len(val) > 0 && (val[0] == '-' || '0' <= val[0] && val[0] <= '9')
}

// stringContent returns the characters of the string literal lit, unescaped.
// It allocates only when lit has escapes.
func stringContent(lit []byte) ([]byte, error) {
	if len(lit) < 2 {
		return nil, strconv.ErrSyntax
	}
	inner := lit[1 : len(lit)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			err := json.Unmarshal(lit, &s)
			return []byte(s), err
		}
	}
	return inner, nil
}
