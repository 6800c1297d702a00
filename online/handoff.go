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

type sampleCounts struct{ offered, kept atomic.Uint64 }

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
// done; then Observe inserts inline again, and Run inserts what is left in
// the queue before it returns. Without Run, Observe inserts inline, which
// is deterministic (eval, replay, a restore before the stream starts).
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
// calls that were sending, and inserts what they left in the queue.
func (l *Learner) stopHandoff(h *handoff) {
	l.mu.Lock()
	l.handoff = nil
	l.mu.Unlock()
	close(h.stopped)
	h.senders.Wait()
	for {
		select {
		case it := <-h.queue:
			l.take(it)
		default:
			return
		}
	}
}

func (l *Learner) take(it insertion) {
	if it.barrier != nil {
		close(it.barrier)
		return
	}
	l.insertAndForget(it)
}

// Flush waits until every example handed off before it is in the window
// (at once when Run is not running).
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
		return nil // stopHandoff inserts everything before it returns
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
	return Sampling{Offered: l.sampled.offered.Load(), Kept: l.sampled.kept.Load()}
}
