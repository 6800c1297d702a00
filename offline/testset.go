package offline

import (
	"fmt"
	"io"

	"streamer/ingest"
	"streamer/online/model"
	"streamer/pipeline"
)

// readTestSet reads the labeled records of path; unlabeled and bad ones
// are skipped.
func readTestSet(path string, dec ingest.Decoder) ([]ingest.Record, error) {
	var test []ingest.Record
	_, err := eachRecord(path, &dec, func(rec ingest.Record) error {
		if rec.Labeled {
			test = append(test, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("test file: %w", err)
	}
	if len(test) == 0 {
		return nil, fmt.Errorf("test file %s has no labeled record", path)
	}
	return test, nil
}

// scoreTestSet scores m on the test records; without a model (nil, or not
// ready) every record counts as wrong.
func scoreTestSet(m *model.Model, test []ingest.Record) pipeline.Score {
	s := pipeline.NewScore()
	ready := m.Ready()
	for _, rec := range test {
		pred := ""
		if ready {
			pred = m.Classes[m.Predict(rec.Vector).Class]
		}
		s.Add(pred, rec.Label)
	}
	return s
}

// countLines counts the non-blank lines of path (decompressed): the length
// of a stream for a progress bar, bad records included.
func countLines(path string) (int, error) {
	in, err := ingest.OpenDecompressed(path)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	buf := make([]byte, 256<<10)
	n, blank := 0, true
	for {
		k, err := in.Read(buf)
		for _, c := range buf[:k] {
			switch {
			case c == '\n':
				if !blank {
					n++
				}
				blank = true
			case c != ' ' && c != '\t' && c != '\r':
				blank = false
			}
		}
		if err == io.EOF {
			if !blank {
				n++
			}
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("count lines of %s: %w", path, err)
		}
	}
}
