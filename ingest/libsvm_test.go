package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestDecodeLIBSVMLine(t *testing.T) {
	small := Decoder{Limits: Limits{MaxFeatures: 2, MaxLineBytes: 40}, Featurizer: Featurizer{Dim: 10}}
	classes := Decoder{Limits: Limits{Classes: []string{"1", "-1"}}}
	tests := []struct {
		name    string
		dec     Decoder
		line    string
		label   string
		labeled bool
		idx     []int32
		val     []float64
		reason  Reason
		field   string
	}{
		{name: "plus one", line: "+1 1:0.5 3:-2", label: "1", labeled: true, idx: []int32{0, 2}, val: []float64{0.5, -2}},
		{name: "minus one", line: "-1 2:1", label: "-1", labeled: true, idx: []int32{1}, val: []float64{1}},
		{name: "zero is unlabeled", line: "0 2:1", idx: []int32{1}, val: []float64{1}},
		{name: "float zero is unlabeled", line: "-0.0 2:1", idx: []int32{1}, val: []float64{1}},
		{name: "zero as a class", dec: Decoder{Unlabeled: UnlabeledLabel{Rule: UnlabeledNone}}, line: "0 2:1", label: "0", labeled: true, idx: []int32{1}, val: []float64{1}},
		{name: "zero forced unlabeled", dec: Decoder{Unlabeled: ZeroUnlabeled()}, line: "0 2:1", idx: []int32{1}, val: []float64{1}},
		{name: "minus one marks unlabeled", dec: Decoder{Unlabeled: UnlabeledLabel{Rule: UnlabeledMark, Value: -1}}, line: "-1.0 2:1", idx: []int32{1}, val: []float64{1}},
		{name: "zero a class beside a minus one mark", dec: Decoder{Unlabeled: UnlabeledLabel{Rule: UnlabeledMark, Value: -1}}, line: "0 2:1", label: "0", labeled: true, idx: []int32{1}, val: []float64{1}},
		{name: "float label", line: "2.0 2:1", label: "2", labeled: true, idx: []int32{1}, val: []float64{1}},
		{name: "label only", line: "1", label: "1", labeled: true, idx: []int32{}, val: []float64{}},
		{name: "qid and comment", line: "1 qid:3 4:1 # 5:7 note", label: "1", labeled: true, idx: []int32{3}, val: []float64{1}},
		{name: "tabs and CR", line: "1\t4:1\t 2:3\r", label: "1", labeled: true, idx: []int32{1, 3}, val: []float64{3, 1}},
		{name: "unsorted", line: "1 9:1 2:2 5:3", label: "1", labeled: true, idx: []int32{1, 4, 8}, val: []float64{2, 3, 1}},
		{name: "index at dim", dec: small, line: "1 10:1", label: "1", labeled: true, idx: []int32{9}, val: []float64{1}},
		{name: "known class", dec: classes, line: "+1 1:1", label: "1", labeled: true, idx: []int32{0}, val: []float64{1}},
		{name: "empty", line: "  ", reason: ReasonMalformedLine},
		{name: "comment only", line: "# x", reason: ReasonMalformedLine},
		{name: "word label", line: "spam 1:1", reason: ReasonWrongType, field: "label"},
		{name: "missing label", line: "1:1 2:2", reason: ReasonWrongType, field: "label"},
		{name: "nan label", line: "nan 1:1", reason: ReasonNonFinite, field: "label"},
		{name: "unknown class", dec: classes, line: "2 1:1", reason: ReasonUnknownClass, field: "label"},
		{name: "no colon", line: "1 3", reason: ReasonMalformedLine, field: "features"},
		{name: "index zero", line: "1 0:1", reason: ReasonBadIndex, field: "features"},
		{name: "negative index", line: "1 -2:1", reason: ReasonBadIndex, field: "features"},
		{name: "index past dim", dec: small, line: "1 11:1", reason: ReasonBadIndex, field: "features"},
		{name: "huge index", line: "1 99999999999999999999:1", reason: ReasonBadIndex, field: "features"},
		{name: "word index", line: "1 x:1", reason: ReasonBadIndex, field: "features"},
		{name: "repeated index", line: "1 3:1 2:1 3:2", reason: ReasonBadIndex, field: "features"},
		{name: "word value", line: "1 3:x", reason: ReasonWrongType, field: "features"},
		{name: "empty value", line: "1 3:", reason: ReasonWrongType, field: "features"},
		{name: "inf value", line: "1 3:inf", reason: ReasonNonFinite, field: "features"},
		{name: "nan value", line: "1 3:NaN", reason: ReasonNonFinite, field: "features"},
		{name: "overflow value", line: "1 3:1e999", reason: ReasonNonFinite, field: "features"},
		{name: "too many", dec: small, line: "1 1:1 2:1 3:1", reason: ReasonTooManyFeatures, field: "features"},
		{name: "too long", dec: small, line: "1 " + strings.Repeat(" ", 40), reason: ReasonOversized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := tt.dec.DecodeLIBSVMLine([]byte(tt.line), "line-1")
			if tt.reason != "" {
				checkDecodeError(t, err, tt.reason, tt.field)
				return
			}
			if err != nil {
				t.Fatalf("DecodeLIBSVMLine(%q): %v", tt.line, err)
			}
			checkExample(t, &tt.dec, ex)
			if ex.ID != "line-1" || ex.Label != tt.label || ex.Labeled != tt.labeled || !ex.TS.IsZero() {
				t.Errorf("example = %+v, want label %q labeled %v", ex, tt.label, tt.labeled)
			}
			if !slices.Equal(ex.Vector.Indices, tt.idx) || !slices.Equal(ex.Vector.Values, tt.val) {
				t.Errorf("vector = %v %v, want %v %v", ex.Vector.Indices, ex.Vector.Values, tt.idx, tt.val)
			}
		})
	}
}

func TestLIBSVMNormalize(t *testing.T) {
	d := Decoder{Featurizer: Featurizer{Normalize: true}}
	ex, err := d.DecodeLIBSVMLine([]byte("1 1:3 2:4"), "x")
	if err != nil || !slices.Equal(ex.Vector.Values, []float64{0.6, 0.8}) {
		t.Fatalf("normalized line = %+v, %v", ex.Vector, err)
	}
}
