package snapshot

import "fmt"

// dictionary numbers names in the order they first come, for a column of
// indices beside the list of names (Grades.Classes, DriftWatch.Classes).
type dictionary struct {
	names []string
	index map[string]int
}

// of returns name's number, giving it the next one when it is new.
func (d *dictionary) of(name string) int {
	if i, ok := d.index[name]; ok {
		return i
	}
	if d.index == nil {
		d.index = map[string]int{}
	}
	d.index[name] = len(d.names)
	d.names = append(d.names, name)
	return len(d.names) - 1
}

// flags returns a column of n flags, one byte each: '1' where set(i),
// '0' elsewhere.
func flags(n int, set func(i int) bool) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = '0'
		if set(i) {
			out[i] = '1'
		}
	}
	return string(out)
}

// checkFlags names the first byte of the column of flags that is neither
// '0' nor '1': the column's name, the byte, and the item it flags.
func checkFlags(column, name, item string) error {
	for i := range len(column) {
		if column[i] != '0' && column[i] != '1' {
			return fmt.Errorf("%w: %s %q of %s %d is not 0 or 1", ErrNotSnapshot, name, column[i], item, i)
		}
	}
	return nil
}
