package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	data := []byte(content)
	if strings.HasSuffix(strings.ToLower(name), ".gz") {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data = b.Bytes()
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// step is what one call to Next must give: a record on that line, a
// decoding error with that reason on that line, or io.EOF (line 0).
type step struct {
	line   int
	reason Reason
}

func checkSteps(t *testing.T, r *FileReader, steps []step) []Record {
	t.Helper()
	var recs []Record
	for k, want := range steps {
		rec, err := r.Next()
		switch {
		case want.line == 0:
			if err != io.EOF {
				t.Fatalf("step %d: Next = %+v, %v; want io.EOF", k, rec, err)
			}
		case want.reason != "":
			if ReasonOf(err) != want.reason || !strings.Contains(err.Error(), fmt.Sprintf("line %d:", want.line)) {
				t.Fatalf("step %d: err = %v; want %s on line %d", k, err, want.reason, want.line)
			}
		default:
			if err != nil || rec.Line != want.line {
				t.Fatalf("step %d: Next = line %d, %v; want line %d", k, rec.Line, err, want.line)
			}
			recs = append(recs, rec)
		}
	}
	return recs
}

func TestJSONLinesContinueAfterBadLine(t *testing.T) {
	content := `{"id":"a","text":"hello world"}
{"id":5,"text":"x"}

{"id":"c","label":1,"vector":[1,2]}
not json
{"id":"e","text":"last line, no newline"}`
	for _, name := range []string{"ex.jsonl", "ex.json", "ex.jsonl.gz", "EX.JSONL.GZ"} {
		t.Run(name, func(t *testing.T) {
			r, err := OpenFile(writeFile(t, name, content), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			recs := checkSteps(t, r, []step{{line: 1}, {line: 2, reason: ReasonWrongType}, {line: 4},
				{line: 5, reason: ReasonMalformedJSON}, {line: 6}, {}, {}})
			if recs[1].ID != "c" || recs[1].Label != "1" || recs[2].ID != "e" {
				t.Fatalf("records = %+v", recs)
			}
		})
	}
}

func TestLIBSVMFiles(t *testing.T) {
	plain, err := os.ReadFile("testdata/small.svm")
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"testdata/small.svm", "testdata/small.svm.bz2", writeFile(t, "small.txt.gz", string(plain))}
	var first []Record
	for _, path := range paths {
		recs, err := ReadAll(path, nil)
		if err != nil {
			t.Fatalf("ReadAll(%s): %v", path, err)
		}
		if first == nil {
			first = recs
			continue
		}
		if !reflect.DeepEqual(recs, first) {
			t.Fatalf("%s reads as %+v, want %+v", path, recs, first)
		}
	}
	if len(first) != 5 {
		t.Fatalf("read %d records, want 5", len(first))
	}
	// The file has classes 2 and 3, so its 0 is a class too (UnlabeledAuto).
	want := []struct {
		id, label string
		labeled   bool
		nnz       int
	}{{"line-2", "1", true, 3}, {"line-3", "-1", true, 2}, {"line-4", "0", true, 1}, {"line-5", "2", true, 2}, {"line-7", "3", true, 0}}
	for k, w := range want {
		r := first[k]
		if r.ID != w.id || r.Label != w.label || r.Labeled != w.labeled || r.Vector.NNZ() != w.nnz {
			t.Errorf("record %d = %+v, want %+v", k, r, w)
		}
	}
	if first[0].Vector.Indices[2] != 9 || first[0].Vector.Values[2] != 2 {
		t.Errorf("10:2 stored as %v %v, want index 9", first[0].Vector.Indices, first[0].Vector.Values)
	}
}

func TestJSONLinesBzip2(t *testing.T) {
	plain, err := ReadAll("testdata/small.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	// small.jsonl.bz2 is small.jsonl compressed with the bzip2 CLI.
	compressed, err := ReadAll("testdata/small.jsonl.bz2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 4 || !reflect.DeepEqual(plain, compressed) {
		t.Fatalf("bz2 reads as %+v, plain as %+v", compressed, plain)
	}
}

func TestLongLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("1")
	for j := 1; j <= DefaultMaxFeatures; j++ {
		fmt.Fprintf(&b, " %d:0.%d", j, j)
	}
	long := b.String() // about 1.3 MB, far over the reader's buffer
	content := "1 1:1\r\n" + long + "\n" + "1 " + strings.Repeat("2:1 ", 300) + "\n-1 3:1\r\n"
	dec := &Decoder{Limits: Limits{MaxLineBytes: 2 << 20}, Featurizer: Featurizer{Dim: 1 << 20}}
	r, err := OpenFile(writeFile(t, "long.svm", content), dec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := checkSteps(t, r, []step{{line: 1}, {line: 2}, {line: 3, reason: ReasonBadIndex}, {line: 4}, {}})
	if recs[1].Vector.NNZ() != DefaultMaxFeatures {
		t.Fatalf("long line has %d features, want %d", recs[1].Vector.NNZ(), DefaultMaxFeatures)
	}

	dec = &Decoder{Limits: Limits{MaxLineBytes: 100 << 10}, Featurizer: Featurizer{Dim: 1 << 20}}
	r, err = OpenFile(writeFile(t, "long.svm.gz", content), dec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkSteps(t, r, []step{{line: 1}, {line: 2, reason: ReasonOversized}, {line: 3, reason: ReasonBadIndex}, {line: 4}, {}})
}

func TestOversizedJSONLine(t *testing.T) {
	content := `{"id":"a","text":"` + strings.Repeat("word ", 100_000) + "\"}\n" + `{"id":"b","text":"ok"}` + "\n"
	r, err := OpenFile(writeFile(t, "big.jsonl", content), &Decoder{Limits: Limits{MaxMessageBytes: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkSteps(t, r, []step{{line: 1, reason: ReasonOversized}, {line: 2}, {}})
}

func TestReadErrorIsSticky(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	fmt.Fprint(zw, strings.Repeat("1 1:1\n", 50_000))
	zw.Close()
	data := b.Bytes()
	data = data[:len(data)/2] // truncated stream
	path := filepath.Join(t.TempDir(), "cut.svm.gz")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var readErr error
	for readErr == nil {
		_, readErr = r.Next()
	}
	if readErr == io.EOF || ReasonOf(readErr) != "" || !errors.Is(readErr, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want a read error", readErr)
	}
	if _, err := r.Next(); err != readErr {
		t.Fatalf("Next after a read error = %v, want %v again", err, readErr)
	}
}

func TestOpenFileErrors(t *testing.T) {
	if _, err := OpenFile(filepath.Join(t.TempDir(), "missing.svm"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
	if _, err := OpenFile(filepath.Join(t.TempDir(), "missing.svm.gz"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing .gz file: err = %v", err)
	}
	notGzip := filepath.Join(t.TempDir(), "x.svm.gz")
	os.WriteFile(notGzip, []byte("1 1:1\n"), 0o600)
	if _, err := OpenFile(notGzip, nil); err == nil {
		t.Errorf("a plain file named .gz opened")
	}
}

func TestReadAllStopsAtError(t *testing.T) {
	recs, err := ReadAll(writeFile(t, "x.svm", "1 1:1\n1 x\n1 2:1\n"), nil)
	if len(recs) != 1 || ReasonOf(err) != ReasonMalformedLine {
		t.Fatalf("ReadAll = %d records, %v", len(recs), err)
	}
}

func TestReadLabelsFile(t *testing.T) {
	for _, name := range []string{"y.labels", "y.labels.gz"} {
		got, err := ReadLabelsFile(writeFile(t, name, "1\n-1\n0\n+1\r\n 1.0 \n-1"))
		if want := []int8{1, -1, 0, 1, 1, -1}; err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ReadLabelsFile = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, content := range []string{"1\n2\n", "1\n\n-1\n", "1\nspam\n"} {
		if _, err := ReadLabelsFile(writeFile(t, "bad.labels", content)); err == nil || !strings.Contains(err.Error(), "line 2:") {
			t.Errorf("ReadLabelsFile(%q) err = %v, want an error on line 2", content, err)
		}
	}
}

func TestLIBSVMClassZero(t *testing.T) {
	threeClass := "0 1:1\n1 1:2\n# comment\n\n2 1:3\n0 2:1\n"
	svmlin := "1 1:1\n-1 1:2\n0 1:3\n+1.0 2:1\n"
	sklearn := "0 1:1\n-1 1:2\n2 1:3\n-1.0 2:1\n1 2:2\n"
	auto, none, zero := UnlabeledLabel{}, UnlabeledLabel{Rule: UnlabeledNone}, ZeroUnlabeled()
	minusOne := UnlabeledLabel{Rule: UnlabeledMark, Value: -1}
	tests := []struct {
		name, file, content string
		rule                UnlabeledLabel
		resolved            UnlabeledLabel
		labeled             []bool // per record
	}{
		{"three classes with 0", "a.svm", threeClass, auto, none, []bool{true, true, true, true}},
		{"three classes, gzip", "a.svm.gz", threeClass, auto, none, []bool{true, true, true, true}},
		{"three classes, --unlabeled-label 0", "a.svm", threeClass, zero, zero, []bool{false, true, true, false}},
		{"plus and minus one with 0", "b.svm", svmlin, auto, zero, []bool{true, true, false, true}},
		{"plus and minus one, gzip", "b.svm.gz", svmlin, auto, zero, []bool{true, true, false, true}},
		{"plus and minus one, 0 forced a class", "b.svm", svmlin, none, none, []bool{true, true, true, true}},
		{"zero and one is binary", "c.svm", "0 1:1\n1 1:2\n", auto, none, []bool{true, true}},
		{"minus one and 0", "d.svm", "-1 1:1\n0 1:2\n", auto, zero, []bool{true, false}},
		{"only zeros is unlabeled", "e.svm", "0 1:1\n0.0 1:2\n", auto, zero, []bool{false, false}},
		{"a bad label does not decide", "f.svm", "x 1:1\n1 1:1\n-1 1:1\n0 1:1\n", auto, zero, []bool{true, true, false}},
		{"scikit-learn's -1 is a class unless said", "g.svm", sklearn, auto, none, []bool{true, true, true, true, true}},
		{"three classes, --unlabeled-label -1", "g.svm", sklearn, minusOne, minusOne, []bool{true, false, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.content)
			dec := &Decoder{Unlabeled: tt.rule}
			r, err := OpenFile(path, dec)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Unlabeled() != tt.resolved || dec.Unlabeled != tt.rule {
				t.Fatalf("file marks unlabeled rows by %v (decoder %v), want %v (decoder unchanged)", r.Unlabeled(), dec.Unlabeled, tt.resolved)
			}
			var labeled []bool
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					continue
				}
				labeled = append(labeled, rec.Labeled)
				if rec.Labeled && rec.Label == "" {
					t.Errorf("line %d labeled with an empty class", rec.Line)
				}
			}
			if !reflect.DeepEqual(labeled, tt.labeled) {
				t.Fatalf("labeled = %v, want %v", labeled, tt.labeled)
			}
		})
	}
}

func TestParseUnlabeledLabel(t *testing.T) {
	for _, u := range []UnlabeledLabel{{}, {Rule: UnlabeledNone}, ZeroUnlabeled(), {Rule: UnlabeledMark, Value: -1}, {Rule: UnlabeledMark, Value: 2.5}} {
		if got, err := ParseUnlabeledLabel(u.String()); err != nil || got != u {
			t.Errorf("ParseUnlabeledLabel(%q) = %v, %v; want %v", u.String(), got, err, u)
		}
	}
	if got, err := ParseUnlabeledLabel("-1.0"); err != nil || got != (UnlabeledLabel{Rule: UnlabeledMark, Value: -1}) {
		t.Errorf("ParseUnlabeledLabel(-1.0) = %v, %v", got, err)
	}
	for _, s := range []string{"x", "nan", "inf", "1:1"} {
		if _, err := ParseUnlabeledLabel(s); err == nil {
			t.Errorf("ParseUnlabeledLabel(%q) accepted", s)
		}
	}
}
