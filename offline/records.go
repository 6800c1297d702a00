package offline

import (
	"errors"
	"io"

	"streamer/ingest"
)

// eachRecord calls fn on every usable record of path in order. Records the
// decoder rejects are counted and skipped; a read error, or an error from
// fn, stops the walk.
func eachRecord(path string, dec *ingest.Decoder, fn func(ingest.Record) error) (bad int, err error) {
	f, err := ingest.OpenFile(path, dec)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	for {
		rec, err := f.Next()
		switch {
		case errors.Is(err, io.EOF):
			return bad, nil
		case ingest.ReasonOf(err) != "":
			bad++
			continue
		case err != nil:
			return bad, err
		}
		if err := fn(rec); err != nil {
			return bad, err
		}
	}
}
