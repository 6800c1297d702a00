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
	share   func() float64 // Run's share; nil when not paced
}

// Sampling counts the unlabeled examples Observe was offered while Run
// ran, and how many it kept for the window.
type Sampling struct {
	Offered, Kept uint64
	// Thinned counts the unlabeled examples that a kNN graph grown behind
	// a backlog left out of the window (Solve under auto): kept by the
	// queue, then sampled out.
	Thinned uint64
	// Dropped counts the examples, labeled or not, left in the queue
	// when Run stopped: forgotten instead of inserted.
	Dropped uint64
	// Paused is the time Run paused so that inserts took their share.
	Paused time.Duration
}

// KeptFraction returns (Kept − Thinned) / Offered, 1 before any was
// offered.
func (s Sampling) KeptFraction() float64 {
	if s.Offered == 0 {
		return 1
	}
	return float64(s.Kept-min(s.Thinned, s.Kept)) / float64(s.Offered)
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

type sampleCounts struct{ offered, kept, thinned, dropped, paused atomic.Uint64 }

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
// done, what the queue holds in batches (take); then Observe inserts
// inline again, and Run drops what is left in the queue before it returns
// (see stopHandoff). Without Run, Observe inserts inline, which is
// deterministic (eval, replay, a restore before the stream starts).
//
// share, when not nil, says what fraction of the time the inserts into a
// kNN graph may take now (1 or more: all of it): Run pauses after each
// paceQuantum of inserts so that they take that share, unless the queue
// is three quarters full, where labeled examples would soon wait for room
// and scoring with them. A service behind a backlog passes its
// schedule.insert_share, so that the graph does not take a core from
// scoring it. A plain window is not paced: its inserts cost next to
// nothing, yet pacing them (their wall time, locks included) drops
// unlabeled examples of a no-graph drain.
func (l *Learner) Run(ctx context.Context, share func() float64) error {
	l.mu.Lock()
	if l.handoff != nil {
		l.mu.Unlock()
		return ErrRunning
	}
	l.flushPending()
	h := &handoff{queue: make(chan insertion, l.cfg.Queue), stopped: make(chan struct{}), sample: l.cfg.Sample, share: share}
	l.handoff = h
	l.mu.Unlock()
	var busy time.Duration
	for {
		if ctx.Err() != nil { // before the queue, which select might pick
			l.stopHandoff(h)
			return nil
		}
		select {
		case it := <-h.queue:
			start := time.Now()
			l.take(h, it)
			if busy += time.Since(start); busy < paceQuantum || !l.graphed.Load() {
				continue
			}
			pause := h.pause(busy)
			busy = 0
			if pause == 0 {
				continue
			}
			l.sampled.paused.Add(uint64(pause))
			select {
			case <-time.After(pause):
			case <-ctx.Done():
				l.stopHandoff(h)
				return nil
			}
		case <-ctx.Done():
			l.stopHandoff(h)
			return nil
		}
	}
}

// paceQuantum is the insert time after which Run considers a pause: long
// enough that timers are accurate, short enough that a pause (three
// quanta at a share of 1/4) delays a labeled example little.
const paceQuantum = 10 * time.Millisecond

// pause returns how long Run waits after inserts that took busy so that
// they take the share of the time: busy·(1 − share)/share; 0 when not
// paced, or when the queue is three quarters full.
func (h *handoff) pause(busy time.Duration) time.Duration {
	f := h.shareNow()
	if f == 1 || 4*len(h.queue) >= 3*cap(h.queue) {
		return 0
	}
	return time.Duration(float64(busy) * (1 - f) / f)
}

// shareNow returns the share of the time that inserts may take now: Run's
// share, or 1 (not paced) without one or outside (0, 1).
func (h *handoff) shareNow() float64 {
	if h.share == nil {
		return 1
	}
	if f := h.share(); f > 0 && f < 1 {
		return f
	}
	return 1
}

// stopHandoff makes Observe insert inline again, waits for the Observe
// calls that were sending, and drops what they left in the queue: its
// examples are forgotten, as if never observed, and the window counts as
// changed. Inserting them would make a stop wait for the graph (tens of
// seconds for a full queue) to fill a window that is about to be left; a restart rebuilds it from the topics, queued rows included, and
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

// take inserts the handed-off it and what else the queue holds, up to
// takeBatch rows in one Window.InsertBatch, so that a graph window places
// them on several cores; a barrier ends the batch, and is released once
// the rows before it are in.
func (l *Learner) take(h *handoff, it insertion) {
	batch := l.batch[:0]
	var barrier chan struct{}
	for {
		if it.barrier != nil {
			barrier = it.barrier
			break
		}
		batch = append(batch, it)
		if len(batch) == takeBatch || !queued(h, &it) {
			break
		}
	}
	l.batch = batch
	if l.tookHook != nil {
		l.tookHook(len(batch))
	}
	l.insertBatchAndForget(batch)
	if barrier != nil {
		close(barrier)
	}
}

// queued takes the next row of the queue into it, if one is waiting.
func queued(h *handoff, it *insertion) bool {
	select {
	case *it = <-h.queue:
		return true
	default:
		return false
	}
}

// takeBatch bounds the rows Run inserts at once, and so how long a solve
// waiting to freeze the window waits at most: a few tens of milliseconds
// for sparse rows on two cores.
const takeBatch = 64

// Flush waits until every example handed off before it is in the window,
// or dropped because Run stopped; when Run is not running, it inserts the
// rows Observe collected (LearnerConfig.BatchInline).
func (l *Learner) Flush(ctx context.Context) error {
	l.mu.Lock()
	h := l.handoff
	if h == nil {
		l.flushPending()
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
	return Sampling{
		Offered: l.sampled.offered.Load(), Kept: l.sampled.kept.Load(), Thinned: l.sampled.thinned.Load(),
		Dropped: l.sampled.dropped.Load(),
		Paused:  time.Duration(l.sampled.paused.Load()),
	}
}
