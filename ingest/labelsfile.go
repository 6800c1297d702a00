package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
)

// ReadLabelsFile reads an SVMlin label file: one label per line, 1 (or +1),
// -1, or 0 for unlabeled, in the order of the examples file. It may be
// compressed like the files OpenFile reads.
func ReadLabelsFile(path string) ([]int8, error) {
	in, err := OpenDecompressed(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var labels []int8
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		y, err := svmlinLabel(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, len(labels)+1, err)
		}
		labels = append(labels, y)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s after line %d: %w", path, len(labels), err)
	}
	return labels, nil
}

func svmlinLabel(line []byte) (int8, error) {
	tok := bytes.TrimSpace(line)
	x, err := strconv.ParseFloat(string(tok), 64)
	if err == nil && (x == 1 || x == -1 || x == 0) {
		return int8(x), nil
	}
	return 0, fmt.Errorf("label %q is not 1, -1 or 0", clip(tok))
}
