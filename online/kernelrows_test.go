package online

import (
	"context"
	"errors"
	"testing"

	"streamer/online/kernel"
	"streamer/synth"
)

// TestMappedRowsStopOnCancel: a solve cancelled while the window's rows
// are mapped returns the context's error and adds nothing to the cache,
// so that the next solve maps the rows it missed.
func TestMappedRowsStopOnCancel(t *testing.T) {
	vecs, _ := synth.Gaussians(2, 300, 4, 1)
	km, err := kernel.NewMap(vecs[:50], 0.5)
	if err != nil {
		t.Fatal(err)
	}
	view := windowView{keys: make([]uint64, len(vecs)), vecs: vecs}
	for i := range view.keys {
		view.keys[i] = uint64(i)
	}
	var c mappedRows
	first := windowView{keys: view.keys[:100], vecs: vecs[:100]}
	if _, err := c.rows(context.Background(), km, first); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rows, err := c.rows(ctx, km, view); !errors.Is(err, context.Canceled) || rows != nil || len(c.byKey) != 100 {
		t.Fatalf("cancelled: %d rows, err = %v, %d cached; want none, context.Canceled, the 100 before", len(rows), err, len(c.byKey))
	}
	rows, err := c.rows(context.Background(), km, view)
	if err != nil || len(rows) != len(vecs) || len(c.byKey) != len(vecs) {
		t.Fatalf("after: %d rows, err = %v, %d cached; want %d", len(rows), err, len(c.byKey), len(vecs))
	}
	for i, r := range rows {
		if r.NNZ() == 0 {
			t.Fatalf("row %d not mapped", i)
		}
	}
}
