package ingest

import (
	"bytes"
	"fmt"
)

// ZeroLabel says what a LIBSVM label of 0 means. SVMlin's files mark the
// unlabeled rows of a ±1 problem with 0, while multi-class files (digits,
// MNIST) use 0 as a class.
type ZeroLabel uint8

const (
	// ZeroAuto decides per file (FileReader): 0 means unlabeled when every
	// label of the file is -1, 0 or +1 and -1 occurs (SVMlin's convention),
	// or when every label is 0 (a file without labels); otherwise, as in a
	// multi-class file or a 0/1 binary file, 0 is a class.
	ZeroAuto ZeroLabel = iota
	// ZeroUnlabeled: a label of 0 always means unlabeled.
	ZeroUnlabeled
	// ZeroClass: a label of 0 is always the class "0".
	ZeroClass
)

// ParseZeroLabel reads the value of an --unlabeled-label flag: "auto", "0"
// (0 means unlabeled) or "none" (no label means unlabeled: 0 is a class).
func ParseZeroLabel(s string) (ZeroLabel, error) {
	switch s {
	case "auto", "":
		return ZeroAuto, nil
	case "0":
		return ZeroUnlabeled, nil
	case "none":
		return ZeroClass, nil
	}
	return ZeroAuto, fmt.Errorf("unlabeled label %q: want auto, 0 or none", s)
}

// String returns the flag value that ParseZeroLabel reads back.
func (z ZeroLabel) String() string {
	switch z {
	case ZeroUnlabeled:
		return "0"
	case ZeroClass:
		return "none"
	}
	return "auto"
}

// labelSet records which LIBSVM labels a file holds, as far as ZeroAuto
// needs to know.
type labelSet struct {
	minusOne, plusOne, other bool
}

// zeroUnlabeled applies the rule of ZeroAuto.
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

// scanZeroLabel reads the label column of the LIBSVM file at path and
// decides what its zeros mean. It stops at the first label other than
// -1, 0 and +1, so a multi-class file costs a few lines; a ±1 file is read
// once through. A read error ends the scan, which decides on the lines
// before it.
func scanZeroLabel(path string, maxLineBytes int) (ZeroLabel, error) {
	in, err := OpenDecompressed(path)
	if err != nil {
		return ZeroAuto, err
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
		return ZeroUnlabeled, nil
	}
	return ZeroClass, nil
}
