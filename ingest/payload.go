package ingest

import (
	"bytes"
	"math"
	"strconv"

	"streamer/vector"
)

// payload featurizes the one payload of an example.
func (f Featurizer) payload(p *exampleFields, lim Limits) (vector.Vector, error) {
	present := func(raw []byte) bool { return raw != nil && !isNull(raw) }
	var n int
	for _, given := range []bool{present(p.text), present(p.features), present(p.indices) || present(p.values), present(p.vector)} {
		if given {
			n++
		}
	}
	switch {
	case n == 0:
		return vector.Vector{}, decodeErr(ReasonNoPayload, "", `no "text", "features", "indices"/"values" or "vector"`)
	case n > 1:
		return vector.Vector{}, decodeErr(ReasonMultiplePayloads, "", `more than one of "text", "features", "indices"/"values" and "vector"`)
	case present(p.text):
		return f.textPayload(p.text, "text", lim)
	case present(p.features):
		return f.featuresPayload(p.features, "features", lim)
	case present(p.vector):
		return f.vectorPayload(p.vector, "vector", lim)
	}
	return f.indexedPayload(p.indices, p.values, "indices", "values", lim)
}

func (f Featurizer) textPayload(raw []byte, field string, lim Limits) (vector.Vector, error) {
	if raw[0] != '"' {
		return vector.Vector{}, decodeErr(ReasonWrongType, field, "%s is a %s, want a string", field, kind(raw))
	}
	text, err := stringContent(raw)
	switch {
	case err != nil:
		return vector.Vector{}, &DecodeError{Reason: ReasonMalformedJSON, Field: field, Err: err}
	case len(text) > lim.MaxTextBytes:
		return vector.Vector{}, decodeErr(ReasonOversized, field, "%s is %d bytes, limit %d", field, len(text), lim.MaxTextBytes)
	}
	v := textVector(f, text)
	if v.NNZ() == 0 {
		return vector.Vector{}, decodeErr(ReasonEmptyText, field, "text has no letters or digits")
	}
	return v, nil
}

func (f Featurizer) featuresPayload(raw []byte, field string, lim Limits) (vector.Vector, error) {
	es, err := f.appendFeatureEntries(nil, raw, field, lim)
	if err != nil {
		return vector.Vector{}, err
	}
	v, err := sparseFromEntries(es, field)
	if err == nil && f.Normalize {
		normalize(v)
	}
	return v, err
}

// appendFeatureEntries appends an entry for each member of the features
// object raw to es, which it allocates when nil.
func (f Featurizer) appendFeatureEntries(es []entry, raw []byte, field string, lim Limits) ([]entry, error) {
	if raw[0] != '{' {
		return nil, decodeErr(ReasonWrongType, field, "%s is a %s, want an object", field, kind(raw))
	}
	if es == nil {
		es = make([]entry, 0, min(bytes.Count(raw, []byte{':'}), lim.MaxFeatures))
	}
	err := eachMember(raw, func(key, val []byte) error {
		if len(es) == lim.MaxFeatures {
			return decodeErr(ReasonTooManyFeatures, field, "more than %d features", lim.MaxFeatures)
		}
		e, err := f.namedEntry(key, val, field)
		es = append(es, e)
		return err
	})
	return es, err
}

// namedEntry turns one member of a features object into an entry.
func (f Featurizer) namedEntry(key, val []byte, field string) (entry, error) {
	name, err := stringContent(key)
	if err != nil {
		return entry{}, &DecodeError{Reason: ReasonMalformedJSON, Field: field, Err: err}
	}
	if !isNumber(val) {
		return entry{}, decodeErr(ReasonWrongType, field, "feature %q is a %s, want a number", clip(name), kind(val))
	}
	x, err := parseFloat(val, field)
	if err != nil {
		return entry{}, err
	}
	return f.nameEntry(name, x, field)
}

// nameEntry is the entry of the feature name of value x: a name made of
// digits is an index, any other is hashed.
func (f Featurizer) nameEntry(name []byte, x float64, field string) (entry, error) {
	if !isIndexKey(name) {
		j, sign := f.nameTerm(name)
		return entry{index: j, value: sign * x}, nil
	}
	j, err := keyIndex(name, f.dim(), field)
	return entry{index: j, explicit: true, value: x}, err
}

// isIndexKey reports whether a feature key is an index: decimal digits, or
// a minus sign and digits, which keyIndex rejects rather than hashing what
// is surely meant as an index.
func isIndexKey(name []byte) bool {
	digits := name
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func keyIndex(name []byte, dim int, field string) (int32, error) {
	if name[0] == '-' {
		return 0, decodeErr(ReasonBadIndex, field, "index %s is negative", clip(name))
	}
	var j int
	for _, c := range name {
		if j = 10*j + int(c-'0'); j >= dim {
			return 0, decodeErr(ReasonBadIndex, field, "index %s is out of range [0, %d)", clip(name), dim)
		}
	}
	return int32(j), nil
}

// indexedPayload decodes the parallel "indices" and "values" arrays.
func (f Featurizer) indexedPayload(indices, values []byte, indicesField, valuesField string, lim Limits) (vector.Vector, error) {
	switch {
	case indices == nil || isNull(indices):
		return vector.Vector{}, decodeErr(ReasonLengthMismatch, indicesField, "%q without %q", valuesField, indicesField)
	case values == nil || isNull(values):
		return vector.Vector{}, decodeErr(ReasonLengthMismatch, valuesField, "%q without %q", indicesField, valuesField)
	}
	idx, err := f.parseIndices(indices, indicesField, lim)
	if err != nil {
		return vector.Vector{}, err
	}
	val, err := parseNumbers(values, valuesField, lim.MaxFeatures)
	if err != nil {
		return vector.Vector{}, err
	}
	if len(idx) != len(val) {
		return vector.Vector{}, decodeErr(ReasonLengthMismatch, valuesField, "%d indices but %d values", len(idx), len(val))
	}
	v, err := sparseFromExplicit(idx, val, indicesField)
	if err == nil && f.Normalize {
		normalize(v)
	}
	return v, err
}

func (f Featurizer) parseIndices(raw []byte, field string, lim Limits) ([]int32, error) {
	if raw[0] != '[' {
		return nil, decodeErr(ReasonWrongType, field, "%s is a %s, want an array", field, kind(raw))
	}
	dim := f.dim()
	idx := make([]int32, 0, min(countElements(raw), lim.MaxFeatures))
	err := eachElement(raw, func(val []byte) error {
		if len(idx) == lim.MaxFeatures {
			return decodeErr(ReasonTooManyFeatures, field, "more than %d indices", lim.MaxFeatures)
		}
		j, err := jsonIndex(val, dim, field)
		idx = append(idx, j)
		return err
	})
	return idx, err
}

// jsonIndex parses an index given as a JSON number; an integral number in
// float form (3.0, 3e0) is accepted.
func jsonIndex(tok []byte, dim int, field string) (int32, error) {
	if !isNumber(tok) {
		return 0, decodeErr(ReasonWrongType, field, "index is a %s, want a number", kind(tok))
	}
	x, err := strconv.ParseFloat(string(tok), 64)
	switch {
	case err != nil && x == 0: // a range error with x = ±Inf falls through to the range checks
		return 0, decodeErr(ReasonWrongType, field, "index %s is not a number", clip(tok))
	case x != math.Trunc(x):
		return 0, decodeErr(ReasonBadIndex, field, "index %s is not an integer", clip(tok))
	case x < 0:
		return 0, decodeErr(ReasonBadIndex, field, "index %s is negative", clip(tok))
	case x >= float64(dim):
		return 0, decodeErr(ReasonBadIndex, field, "index %s is out of range [0, %d)", clip(tok), dim)
	}
	return int32(x), nil
}

func (f Featurizer) vectorPayload(raw []byte, field string, lim Limits) (vector.Vector, error) {
	limit := lim.MaxFeatures
	if f.DenseDim > 0 {
		limit = f.DenseDim
	}
	val, err := parseNumbers(raw, field, limit)
	switch {
	case ReasonOf(err) == ReasonTooManyFeatures && f.DenseDim > 0:
		return vector.Vector{}, decodeErr(ReasonDimensionMismatch, field, "more than %d values, want %d", limit, f.DenseDim)
	case err != nil:
		return vector.Vector{}, err
	case len(val) == 0:
		return vector.Vector{}, decodeErr(ReasonDimensionMismatch, field, "%s is empty", field)
	case f.DenseDim > 0 && len(val) != f.DenseDim:
		return vector.Vector{}, decodeErr(ReasonDimensionMismatch, field, "%d values, want %d", len(val), f.DenseDim)
	}
	v := vector.Dense(val)
	if f.Normalize {
		normalize(v)
	}
	return v, nil
}

// parseNumbers decodes a JSON array of at most limit finite numbers.
func parseNumbers(raw []byte, field string, limit int) ([]float64, error) {
	if raw[0] != '[' {
		return nil, decodeErr(ReasonWrongType, field, "%s is a %s, want an array", field, kind(raw))
	}
	val := make([]float64, 0, min(countElements(raw), limit))
	err := eachElement(raw, func(tok []byte) error {
		if len(val) == limit {
			return decodeErr(ReasonTooManyFeatures, field, "more than %d values", limit)
		}
		if !isNumber(tok) {
			return decodeErr(ReasonWrongType, field, "value is a %s, want a number", kind(tok))
		}
		x, err := parseFloat(tok, field)
		val = append(val, x)
		return err
	})
	return val, err
}
