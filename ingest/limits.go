package ingest

import (
	"errors"
	"fmt"
	"slices"
)

// Limits bounds what the decoder accepts from outside. The zero value of
// each field means its documented default; Validate rejects negative values.
type Limits struct {
	MaxMessageBytes   int // one Kafka message or JSONL line; 0 means 1 MiB
	MaxLineBytes      int // one LIBSVM line; 0 means 16 MiB (100,000 features fit in about 2 MiB)
	MaxIDBytes        int // example id; 0 means 256
	MaxTextBytes      int // text payload after JSON unescaping; 0 means 512 KiB
	MaxFeatures       int // stored values of a numeric payload; 0 means 100,000
	MaxClassNameBytes int // label; 0 means 128
	// Classes, when non-nil, is the fixed list of labels; any other label is
	// rejected with ReasonUnknownClass. Nil means any label.
	Classes []string
}

// Default limits.
const (
	DefaultMaxMessageBytes   = 1 << 20
	DefaultMaxLineBytes      = 16 << 20
	DefaultMaxIDBytes        = 256
	DefaultMaxTextBytes      = 512 << 10
	DefaultMaxFeatures       = 100_000
	DefaultMaxClassNameBytes = 128
)

// Validate reports the first field that is out of range.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"MaxMessageBytes", l.MaxMessageBytes},
		{"MaxLineBytes", l.MaxLineBytes},
		{"MaxIDBytes", l.MaxIDBytes},
		{"MaxTextBytes", l.MaxTextBytes},
		{"MaxFeatures", l.MaxFeatures},
		{"MaxClassNameBytes", l.MaxClassNameBytes},
	} {
		if f.v < 0 {
			return fmt.Errorf("limits: %s is %d, want >= 0", f.name, f.v)
		}
	}
	return l.validateClasses()
}

func (l Limits) validateClasses() error {
	if l.Classes != nil && len(l.Classes) == 0 {
		return errors.New("limits: Classes is empty but not nil; nil means any class")
	}
	maxName := l.withDefaults().MaxClassNameBytes
	for k, c := range l.Classes {
		switch {
		case c == "":
			return fmt.Errorf("limits: Classes[%d] is empty", k)
		case len(c) > maxName:
			return fmt.Errorf("limits: Classes[%d] is %d bytes, longer than MaxClassNameBytes %d", k, len(c), maxName)
		case slices.Contains(l.Classes[:k], c):
			return fmt.Errorf("limits: Classes[%d] %q is repeated", k, c)
		}
	}
	return nil
}

// withDefaults replaces zero (and invalid negative) fields by their defaults.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&l.MaxLineBytes, DefaultMaxLineBytes)
	def(&l.MaxIDBytes, DefaultMaxIDBytes)
	def(&l.MaxTextBytes, DefaultMaxTextBytes)
	def(&l.MaxFeatures, DefaultMaxFeatures)
	def(&l.MaxClassNameBytes, DefaultMaxClassNameBytes)
	return l
}
