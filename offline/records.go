package offline

import (
	"errors"
	"fmt"
	"io"

	"streamer/ingest"
)

// eachRecord calls fn on every usable record of path in order. Records the
// decoder rejects are counted and skipped; a read error, or an error from
// fn, stops the walk.
func eachRecord(path string, dec *ingest.Decoder, fn func(ingest.Record) error) (bad int, err error) {
	return eachRecordNamingBad(path, dec, nil, fn)
}

// eachRecordNamingBad is eachRecord that also names the rejected records
// (file, line and reason) on badLines, when it is not nil.
func eachRecordNamingBad(path string, dec *ingest.Decoder, badLines io.Writer, fn func(ingest.Record) error) (bad int, err error) {
	f, err := ingest.OpenFile(path, dec)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	defer func() { nameBad(badLines, bad, nil) }()
	for {
		rec, err := f.Next()
		switch {
		case errors.Is(err, io.EOF):
			return bad, nil
		case ingest.ReasonOf(err) != "":
			bad++
			nameBad(badLines, bad, err)
			continue
		case err != nil:
			return bad, err
		}
		if err := fn(rec); err != nil {
			return bad, err
		}
	}
}

// MaxBadLines is how many rejected records fit and predict name, so that a
// file of bad lines does not flood the terminal; the rest are counted.
const MaxBadLines = 20

// nameBad writes the bad-th rejected record's error (which names the file
// and line), while bad ≤ MaxBadLines; with a nil err, at the end, how many
// more there were.
func nameBad(w io.Writer, bad int, err error) {
	switch {
	case w == nil:
	case err != nil && bad <= MaxBadLines:
		fmt.Fprintf(w, "bad record: %v\n", err)
	case err == nil && bad > MaxBadLines:
		fmt.Fprintf(w, "bad records: %d more not shown\n", bad-MaxBadLines)
	}
}
