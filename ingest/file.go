package ingest

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Record is one example read from a file.
type Record struct {
	Example
	Line int // 1-based line number in the decompressed file
}

// FileReader reads examples from a file for the offline commands. The
// format follows the name: .jsonl and .json hold one example message per
// line (see Decoder.DecodeExample); anything else is LIBSVM/svmlight (see
// Decoder.DecodeLIBSVMLine), whose examples get the id "line-N", N the
// 1-based line number. A further .gz or .bz2 suffix means compressed.
// Blank lines, and in LIBSVM lines starting with '#', are skipped. Which
// LIBSVM label marks an unlabeled row follows Decoder.Unlabeled; with
// UnlabeledAuto, OpenFile first reads the file's labels to decide (see
// UnlabeledAuto).
type FileReader struct {
	path   string
	dec    *Decoder
	jsonl  bool
	limit  int // longest line accepted
	in     io.ReadCloser
	br     *bufio.Reader
	line   int
	buf    []byte // a line longer than br's buffer
	err    error  // sticky: io.EOF at the end, or the read error
	closed bool
}

// OpenFile opens path for reading with dec; a nil dec means the zero
// Decoder.
func OpenFile(path string, dec *Decoder) (*FileReader, error) {
	if dec == nil {
		dec = &Decoder{}
	}
	jsonl := IsJSONLines(path)
	lim := dec.Limits.withDefaults()
	if !jsonl && dec.Unlabeled.Rule == UnlabeledAuto {
		rule, err := scanUnlabeledLabel(path, lim.MaxLineBytes)
		if err != nil {
			return nil, err
		}
		resolved := *dec
		resolved.Unlabeled = rule
		dec = &resolved
	}
	in, err := OpenDecompressed(path)
	if err != nil {
		return nil, err
	}
	r := &FileReader{path: path, dec: dec, jsonl: jsonl, in: in, br: newBufferedReader(in)}
	r.limit = lim.MaxLineBytes
	if r.jsonl {
		r.limit = lim.MaxMessageBytes
	}
	return r, nil
}

func newBufferedReader(in io.Reader) *bufio.Reader { return bufio.NewReaderSize(in, 64<<10) }

// Unlabeled returns which LIBSVM label marks an unlabeled row in this
// file: the decoder's rule, or for UnlabeledAuto what the file's labels
// decided.
func (r *FileReader) Unlabeled() UnlabeledLabel { return r.dec.Unlabeled }

// Next returns the next example, or io.EOF after the last. A line that does
// not decode gives an error wrapping its *DecodeError with the path and line
// number; the next call goes on with the following line. Any other error
// (reading, decompressing) ends the file and is returned again by every
// later call.
func (r *FileReader) Next() (Record, error) {
	for r.err == nil {
		line, tooLong, err := r.readLine()
		if err != nil {
			r.err = err
			if err != io.EOF {
				r.err = fmt.Errorf("read %s after line %d: %w", r.path, r.line, err)
			}
			break
		}
		r.line++
		if tooLong {
			return Record{}, r.lineError(decodeErr(ReasonOversized, "", "line is longer than %d bytes", r.limit))
		}
		if r.skip(line) {
			continue
		}
		ex, err := r.decode(line)
		if err != nil {
			return Record{}, r.lineError(err)
		}
		return Record{Example: ex, Line: r.line}, nil
	}
	return Record{}, r.err
}

func (r *FileReader) decode(line []byte) (Example, error) {
	if r.jsonl {
		return r.dec.DecodeExample(line)
	}
	return r.dec.DecodeLIBSVMLine(line, "line-"+strconv.Itoa(r.line))
}

func (r *FileReader) skip(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r\v\f")
	return len(line) == 0 || !r.jsonl && line[0] == '#'
}

func (r *FileReader) lineError(err error) error {
	return fmt.Errorf("%s line %d: %w", r.path, r.line, err)
}

// readLine returns the next line without its line ending, valid until the
// next call. A line longer than r.limit is consumed but reported as tooLong
// instead, so memory stays bounded.
func (r *FileReader) readLine() (line []byte, tooLong bool, err error) {
	chunk, err := r.br.ReadSlice('\n')
	switch {
	case err == nil || err == io.EOF && len(chunk) > 0:
		line = trimEOL(chunk)
		return line, len(line) > r.limit, nil
	case err != bufio.ErrBufferFull:
		return nil, false, err
	}
	r.buf = append(r.buf[:0], chunk...)
	total := len(chunk)
	for err == bufio.ErrBufferFull {
		chunk, err = r.br.ReadSlice('\n')
		if total += len(chunk); total <= r.limit+2 { // room for "\r\n"
			r.buf = append(r.buf, chunk...)
		}
	}
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	line = trimEOL(r.buf)
	return line, total > r.limit+2 || len(line) > r.limit, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// Close closes the file. It is safe to call more than once.
func (r *FileReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.err == nil {
		r.err = fmt.Errorf("read %s: %w", r.path, os.ErrClosed)
	}
	return r.in.Close()
}

// ReadAll reads every example of the file at path. It stops at the first
// error of any kind and returns it with the records before it.
func ReadAll(path string, dec *Decoder) ([]Record, error) {
	r, err := OpenFile(path, dec)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
}

// IsJSONLines reports whether OpenFile reads path as JSON lines (else as
// LIBSVM).
func IsJSONLines(path string) bool {
	name, _ := splitCompression(path)
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".jsonl" || ext == ".json"
}

// splitCompression returns path without a .gz or .bz2 suffix, and that
// suffix.
func splitCompression(path string) (string, string) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".gz" || ext == ".bz2" {
		return strings.TrimSuffix(path, filepath.Ext(path)), ext
	}
	return path, ""
}

// OpenDecompressed opens path for reading, undoing the compression its
// name says: gzip for a .gz suffix, bzip2 for .bz2 (in any case); any
// other file is read as it is. Closing the reader closes the file.
func OpenDecompressed(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	_, ext := splitCompression(path)
	switch ext {
	case ".gz":
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		return readCloser{zr, func() error { return errors.Join(zr.Close(), f.Close()) }}, nil
	case ".bz2":
		return readCloser{bzip2.NewReader(f), f.Close}, nil
	}
	return f, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (rc readCloser) Close() error { return rc.close() }
