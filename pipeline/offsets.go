package pipeline

import (
	"cmp"
	"slices"
)

// Position is how far a topic partition was read, and from where a restore
// must read it again: Start is the offset of the oldest record the learner
// still holds (Next when it holds none), Next the offset after the last one
// read.
type Position struct {
	Topic     string
	Partition int
	Start     int64
	Next      int64
}

// offsetTracker remembers, per topic partition, the records the pipeline
// still depends on, in offset order, so that a snapshot can say where to
// read again. Liveness is checked lazily from the front: a record is held
// while live(id) says so.
type offsetTracker struct {
	parts map[partitionKey]*partitionLog
	live  func(id string) bool
}

type partitionKey struct {
	topic     string
	partition int
}

type partitionLog struct {
	entries []offsetEntry
	head    int
	next    int64
}

type offsetEntry struct {
	offset int64
	id     string
}

func newOffsetTracker(live func(string) bool) *offsetTracker {
	return &offsetTracker{parts: map[partitionKey]*partitionLog{}, live: live}
}

// add records that the record at offset, for example or label id, was read.
// held says whether the pipeline keeps depending on it.
func (t *offsetTracker) add(topic string, partition int, offset int64, id string, held bool) {
	k := partitionKey{topic, partition}
	p := t.parts[k]
	if p == nil {
		p = &partitionLog{}
		t.parts[k] = p
	}
	if offset >= p.next {
		p.next = offset + 1
	}
	if held {
		p.entries = append(p.entries, offsetEntry{offset, id})
	}
	p.trim(t.live)
}

// trim drops dead entries from the front and compacts the slice.
func (p *partitionLog) trim(live func(string) bool) {
	for p.head < len(p.entries) && !live(p.entries[p.head].id) {
		p.entries[p.head] = offsetEntry{}
		p.head++
	}
	if p.head > 1024 && p.head > len(p.entries)/2 {
		p.entries = append(p.entries[:0], p.entries[p.head:]...)
		p.head = 0
	}
}

// positions returns every partition's position, ordered by topic and
// partition.
func (t *offsetTracker) positions() []Position {
	out := make([]Position, 0, len(t.parts))
	for k, p := range t.parts {
		p.trim(t.live)
		start := p.next
		if p.head < len(p.entries) {
			start = p.entries[p.head].offset
		}
		out = append(out, Position{Topic: k.topic, Partition: k.partition, Start: start, Next: p.next})
	}
	slices.SortFunc(out, func(a, b Position) int {
		if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return out
}
