package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"streamer/ingest"
	"streamer/synth"
)

// record is one example to produce: its id, its JSON value without the
// label, and its true label.
type record struct {
	id    string
	value []byte
	label string
}

// source yields the records of the demo stream; ok is false at its end.
type source interface {
	next() (record, bool, error)
	close() error
}

// generated is the synthetic two-class text stream.
type generated struct {
	s    *synth.TextStream
	left int
}

func (g *generated) next() (record, bool, error) {
	if g.left == 0 {
		return record{}, false, nil
	}
	g.left--
	d := g.s.Next()
	v, err := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text})
	return record{id: d.ID, value: v, label: d.Label}, true, err
}

func (g *generated) close() error { return nil }

// file is a JSONL file of examples (optionally .gz or .bz2), each with its
// true label, which is taken off the record before it is produced.
type file struct {
	f    io.ReadCloser
	r    *bufio.Reader
	line int
}

func openFile(path string) (*file, error) {
	f, err := ingest.OpenDecompressed(path)
	if err != nil {
		return nil, fmt.Errorf("demo data: %w", err)
	}
	return &file{f: f, r: bufio.NewReaderSize(f, 1<<20)}, nil
}

func (f *file) next() (record, bool, error) {
	for {
		line, err := f.r.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return record{}, false, nil
		}
		if err != nil && err != io.EOF {
			return record{}, false, fmt.Errorf("demo data line %d: %w", f.line+1, err)
		}
		f.line++
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue // the service's dead letters are not the point of the demo
		}
		id, _ := m["id"].(string)
		label := fmt.Sprint(m["label"])
		if m["label"] == nil {
			label = ""
		}
		delete(m, "label")
		v, err := json.Marshal(m)
		if err != nil || id == "" {
			continue
		}
		return record{id: id, value: v, label: label}, true, nil
	}
}

func (f *file) close() error { return f.f.Close() }
