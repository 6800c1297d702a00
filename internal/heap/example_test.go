package heap_test

import (
	"fmt"

	"streamer/internal/heap"
)

// The three smallest of a stream, with a heap whose top is the largest
// kept: an item that beats it replaces it.
func Example() {
	farther := func(a, b float64) bool { return a > b }
	kept := heap.New(make([]float64, 0, 3), farther)
	for _, d := range []float64{0.9, 0.2, 0.7, 0.4, 0.8, 0.1} {
		switch {
		case kept.Len() < 3:
			kept.Push(d)
		case d < kept.Top():
			kept.ReplaceTop(d)
		}
	}
	for kept.Len() > 0 {
		fmt.Println(kept.Pop())
	}
	// Output:
	// 0.4
	// 0.2
	// 0.1
}
