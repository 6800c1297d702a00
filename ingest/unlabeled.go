package ingest

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// UnlabeledLabel says which LIBSVM label, if any, marks an unlabeled row.
// SVMlin's files mark the unlabeled rows of a ±1 problem with 0, while
// multi-class files (digits, MNIST) use 0 as a class; scikit-learn's
// semi-supervised estimators mark unlabeled rows with -1. The zero value
// is UnlabeledAuto.
type UnlabeledLabel struct {
	Rule UnlabeledRule
	// Value is the label that marks an unlabeled row, with UnlabeledMark.
	Value float64
}

// UnlabeledRule says how UnlabeledLabel decides.
type UnlabeledRule uint8

const (
	// UnlabeledAuto decides per file (FileReader): 0 marks unlabeled rows
	// when every label of the file is -1, 0 or +1 and -1 occurs (SVMlin's
	// convention), or when every label is 0 (a file without labels);
	// otherwise, as in a multi-class file or a 0/1 binary file, 0 is a
	// class. A line decoded on its own reads 0 as unlabeled.
	UnlabeledAuto UnlabeledRule = iota
	// UnlabeledMark: the label Value always marks an unlabeled row.
	UnlabeledMark
	// UnlabeledNone: every label is a class.
	UnlabeledNone
)

// ZeroUnlabeled is SVMlin's rule: a label of 0 marks an unlabeled row.
func ZeroUnlabeled() UnlabeledLabel { return UnlabeledLabel{Rule: UnlabeledMark} }

// ParseUnlabeledLabel reads the value of an --unlabeled-label flag: "auto",
// "none" (every label is a class), or the number that marks unlabeled rows
// ("0" as in SVMlin's files, "-1" as in scikit-learn's).
func ParseUnlabeledLabel(s string) (UnlabeledLabel, error) {
	switch s {
	case "auto", "":
		return UnlabeledLabel{}, nil
	case "none":
		return UnlabeledLabel{Rule: UnlabeledNone}, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return UnlabeledLabel{}, fmt.Errorf("unlabeled label %q: want auto, none or a number", s)
	}
	return UnlabeledLabel{Rule: UnlabeledMark, Value: x}, nil
}

// String returns the flag value that ParseUnlabeledLabel reads back.
func (u UnlabeledLabel) String() string {
	switch u.Rule {
	case UnlabeledMark:
		return strconv.FormatFloat(u.Value, 'g', -1, 64)
	case UnlabeledNone:
		return "none"
	}
	return "auto"
}

// marks reports whether a row labeled x is unlabeled under u, with
// UnlabeledAuto read as SVMlin's rule.
func (u UnlabeledLabel) marks(x float64) bool {
	switch u.Rule {
	case UnlabeledMark:
		return x == u.Value
	case UnlabeledNone:
		return false
	}
	return x == 0
}

// labelSet records which LIBSVM labels a file holds, as far as UnlabeledAuto
// needs to know.
type labelSet struct {
	minusOne, plusOne, other bool
}

// zeroUnlabeled applies the rule of UnlabeledAuto.
func (s labelSet) zeroUnlabeled() bool {
	return !s.other && (s.minusOne || !s.plusOne)
}

// add records the label token of one line; a token that is not a number is
// ignored (decoding the line reports it).
func (s *labelSet) add(tok []byte) {
	x, err := parseFloat(tok, "label")
	switch {
	case err != nil, x == 0:
	case x == 1:
		s.plusOne = true
	case x == -1:
		s.minusOne = true
	default:
		s.other = true
	}
}

// scanUnlabeledLabel reads the label column of the LIBSVM file at path and
// decides what its zeros mean. It stops at the first label other than
// -1, 0 and +1, so a multi-class file costs a few lines; a ±1 file is read
// once through. A read error ends the scan, which decides on the lines
// before it.
func scanUnlabeledLabel(path string, maxLineBytes int) (UnlabeledLabel, error) {
	in, err := OpenDecompressed(path)
	if err != nil {
		return UnlabeledLabel{}, err
	}
	defer in.Close()
	r := &FileReader{path: path, in: in, br: newBufferedReader(in), limit: maxLineBytes}
	var set labelSet
	for !set.other {
		line, _, err := r.readLine()
		if err != nil {
			break // a read error is the FileReader's to report, where it occurs
		}
		line = bytes.TrimLeft(line, " \t\r\v\f")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		tok, _ := nextField(line)
		set.add(tok)
	}
	if set.zeroUnlabeled() {
		return ZeroUnlabeled(), nil
	}
	return UnlabeledLabel{Rule: UnlabeledNone}, nil
}
