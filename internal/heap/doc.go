// Package heap is a binary heap in two forms. Heap holds items of any
// type in the order of a function the caller gives: brokers merges its
// partitions' records with it, anngraph orders its points' ages, and its
// API serves online's partial sorts (New arranges a slice in place, Pop
// hands out the least item). Pairs holds (key, value) pairs of ordered
// types, least first, compared with the operators: the compiler inlines
// those and never a call through Heap's function, so it is the form for
// the hot loops, anngraph's graph searches. Both sift the same way.
//
// It knows nothing of what it holds: no distances, records or times, and
// it imports nothing of this module.
package heap
