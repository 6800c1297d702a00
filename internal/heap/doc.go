// Package heap is a binary heap of items of any type, in the order of a
// function the caller gives: the least item on top. anngraph keeps its
// search candidates and its points' ages in it, brokers the partitions of
// a merged read; its API serves online's partial sorts too (New arranges
// a slice in place, Pop hands out the least item).
//
// It knows nothing of what it holds: no distances, records or times, and
// it imports nothing of this module.
package heap
