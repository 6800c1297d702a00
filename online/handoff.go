package online

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"streamer/vector"
)

// insertion is a row on its way into the window; a barrier instead marks
// a point of the queue that Flush waits for.
type insertion struct {
	key     uint64
	ts      time.Time
	v       vector.Vector
	barrier chan struct{}
}

// handoff carries examples from Observe to the goroutine of Run, which
// inserts them into the window, so that scoring never waits for the kNN
// graph. It exists while Run runs.
type handoff struct {
	queue   chan insertion
	stopped chan struct{}  // closed when Run stops taking from queue
	senders sync.WaitGroup // Observe calls that may still send to queue
	sample  float64
}

// Sampling counts the unlabeled examples Observe was offered while Run
// ran, and how many it kept for the window.
type Sampling struct {
	Offered, Kept uint64
	// Dropped counts the examples, labeled or not, left in the queue
	// when Run stopped: forgotten instead of inserted.
	Dropped uint64
}

// KeptFraction returns Kept / Offered, 1 before any was offered.
func (s Sampling) KeptFraction() float64 {
	if s.Offered == 0 {
		return 1
	}
	return float64(s.Kept) / float64(s.Offered)
}

// offerUnlabeled hands an unlabeled example to the queue when the sample
// keeps it and the queue is less than half full, and counts it. The other
// half is kept for labeled examples, which wait for room: were unlabeled
// ones to fill the queue, every labeled one would wait for an insertion
// and scoring would run at the graph's pace. The caller holds mu.
func (h *handoff) offerUnlabeled(id string, it insertion, counts *sampleCounts) bool {
	counts.offered.Add(1)
	if h.sample > 0 && h.sample < 1 && unitHash(id) >= h.sample {
		return false
	}
	if 2*len(h.queue) >= cap(h.queue) {
		return false
	}
	select {
	case h.queue <- it:
		counts.kept.Add(1)
		return true
	default:
		return false
	}
}

type sampleCounts struct{ offered, kept, dropped atomic.Uint64 }

// unitHash maps an id to [0, 1), the same for every run: FNV-1a, whose
// high bits vary little between short ids, then SplitMix64's finalizer.
func unitHash(id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// ErrRunning is returned by a second Run on one Learner.
var ErrRunning = errors.New("learner already running")

// Run inserts the examples Observe hands off into the window until ctx is
// done; then Observe inserts inline again, and Run drops what is left in
// the queue before it returns (see stopHandoff). Without Run, Observe
// inserts inline, which is deterministic (eval, replay, a restore before
// the stream starts).
func (l *Learner) Run(ctx context.Context) error {
	l.mu.Lock()
	if l.handoff != nil {
		l.mu.Unlock()
		return ErrRunning
	}
	h := &handoff{queue: make(chan insertion, l.cfg.Queue), stopped: make(chan struct{}), sample: l.cfg.Sample}
	l.handoff = h
	l.mu.Unlock()
	for {
		select {
		case it := <-h.queue:
			l.take(it)
		case <-ctx.Done():
			l.stopHandoff(h)
			return nil
		}
	}
}

// stopHandoff makes Observe insert inline again, waits for the Observe
// calls that were sending, and drops what they left in the queue: its
// examples are forgotten, as if never observed, and the window counts as
// changed. Inserting them would make a stop wait for the graph (a full
// queue of 16,384 took 24 to 55 s) to fill a window that is about to be
// left; a restart rebuilds it from the topics, queued rows included, and
// solves again because the last model was not solved on them.
func (l *Learner) stopHandoff(h *handoff) {
	l.mu.Lock()
	l.handoff = nil
	l.mu.Unlock()
	close(h.stopped)
	h.senders.Wait()
	var dropped []uint64
	for {
		select {
		case it := <-h.queue:
			if it.barrier != nil {
				close(it.barrier)
				continue
			}
			dropped = append(dropped, it.key)
		default:
			l.drop(dropped...)
			return
		}
	}
}

// drop forgets examples admitted for the window that never reached it.
func (l *Learner) drop(keys ...uint64) {
	if len(keys) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(keys)
	l.changed = true
	l.sampled.dropped.Add(uint64(len(keys)))
}

func (l *Learner) take(it insertion) {
	if it.barrier != nil {
		close(it.barrier)
		return
	}
	l.insertAndForget(it)
}

// Flush waits until every example handed off before it is in the window,
// or dropped because Run stopped (at once when Run is not running).
func (l *Learner) Flush(ctx context.Context) error {
	l.mu.Lock()
	h := l.handoff
	if h == nil {
		l.mu.Unlock()
		return nil
	}
	h.senders.Add(1)
	l.mu.Unlock()
	done := make(chan struct{})
	select {
	case h.queue <- insertion{barrier: done}:
		h.senders.Done()
	case <-h.stopped:
		h.senders.Done()
		return nil // stopHandoff empties the queue before it returns
	case <-ctx.Done():
		h.senders.Done()
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-h.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sampling returns the counts of unlabeled examples offered and kept while
// Run ran.
func (l *Learner) Sampling() Sampling {
	return Sampling{Offered: l.sampled.offered.Load(), Kept: l.sampled.kept.Load(), Dropped: l.sampled.dropped.Load()}
}
