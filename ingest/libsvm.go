package ingest

import (
	"bytes"
	"errors"
	"strconv"

	"streamer/vector"
)

// DecodeLIBSVMLine decodes one line of a LIBSVM/svmlight file,
//
//	label idx:val idx:val ... # comment
//
// The label is a number, normalized like a numeric JSON label ("+1" and
// "1.0" become "1"); d.Unlabeled says which label, if any, marks an
// unlabeled row (UnlabeledAuto, for a line on its own, means 0). Indices
// are 1-based in the line and stored 0-based, so they must lie in [1, Dim];
// they may come in any order but not twice. qid:n tokens and the comment are ignored.
// Values are kept as given unless Featurizer.Normalize is set. The example
// gets the given id and a zero TS. Errors are *DecodeError, unwrapped: the
// caller knows where the line came from.
func (d *Decoder) DecodeLIBSVMLine(line []byte, id string) (Example, error) {
	lim := d.Limits.withDefaults()
	if len(line) > lim.MaxLineBytes {
		return Example{}, decodeErr(ReasonOversized, "", "line is %d bytes, limit %d", len(line), lim.MaxLineBytes)
	}
	if k := bytes.IndexByte(line, '#'); k >= 0 {
		line = line[:k]
	}
	label, rest := nextField(line)
	if len(label) == 0 {
		return Example{}, decodeErr(ReasonMalformedLine, "", "line has no label")
	}
	ex := Example{ID: id}
	var err error
	if ex.Label, ex.Labeled, err = libsvmLabel(label, d.Unlabeled, lim); err != nil {
		return Example{}, err
	}
	if ex.Vector, err = d.libsvmFeatures(rest, lim); err != nil {
		return Example{}, err
	}
	return ex, nil
}

// nextField splits off the first field of s, fields being separated by
// spaces and tabs (and a stray carriage return).
func nextField(s []byte) (field, rest []byte) {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isBlank(s[j]) {
		j++
	}
	return s[i:j], s[j:]
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func libsvmLabel(tok []byte, unlabeled UnlabeledLabel, lim Limits) (string, bool, error) {
	x, err := parseFloat(tok, "label")
	if err != nil {
		return "", false, err
	}
	if unlabeled.marks(x) {
		return "", false, nil
	}
	label := numericLabel(x)
	return label, true, checkClass(label, "label", lim)
}

func (d *Decoder) libsvmFeatures(s []byte, lim Limits) (vector.Vector, error) {
	dim := d.Featurizer.dim()
	n := min(bytes.Count(s, []byte{':'}), lim.MaxFeatures)
	idx := make([]int32, 0, n)
	val := make([]float64, 0, n)
	for {
		var tok []byte
		if tok, s = nextField(s); len(tok) == 0 {
			break
		}
		key, value, ok := bytes.Cut(tok, []byte{':'})
		switch {
		case !ok:
			return vector.Vector{}, decodeErr(ReasonMalformedLine, "features", "%q is not index:value", clip(tok))
		case string(key) == "qid":
			continue
		case len(idx) == lim.MaxFeatures:
			return vector.Vector{}, decodeErr(ReasonTooManyFeatures, "features", "more than %d features", lim.MaxFeatures)
		}
		j, err := libsvmIndex(key, dim)
		if err != nil {
			return vector.Vector{}, err
		}
		x, err := parseFloat(value, "features")
		if err != nil {
			return vector.Vector{}, err
		}
		idx = append(idx, j)
		val = append(val, x)
	}
	v, err := sparseFromExplicit(idx, val, "features")
	if err == nil && d.Featurizer.Normalize {
		normalize(v)
	}
	return v, err
}

// libsvmIndex parses a 1-based index and returns it 0-based.
func libsvmIndex(tok []byte, dim int) (int32, error) {
	n, err := strconv.ParseInt(string(tok), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) || err == nil && n > int64(dim):
		return 0, decodeErr(ReasonBadIndex, "features", "index %s is out of range [1, %d]", clip(tok), dim)
	case err != nil:
		return 0, decodeErr(ReasonBadIndex, "features", "index %q is not an integer", clip(tok))
	case n < 1:
		return 0, decodeErr(ReasonBadIndex, "features", "index %d is below 1 (LIBSVM indices start at 1)", n)
	}
	return int32(n - 1), nil
}
