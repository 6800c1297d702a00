package ingest

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Prediction is what the service said about an example when it arrived,
// kept so that a late label can score it prequentially (test, then train).
type Prediction struct {
	Class        string    // predicted class; empty when there was no model yet
	Score        float64   // decision value behind Class
	Prob         float64   // calibrated probability of Class, as published
	Baseline     string    // class predicted by a supervised-only baseline, if one runs
	ModelVersion uint64    // version of the model that predicted
	At           time.Time // when the prediction was made
}

// JoinConfig sizes a Join. The zero value of each field means its default.
type JoinConfig struct {
	// PendingLabels is how many labels may wait for an example not seen
	// yet; 0 means 100,000. The least recently received is dropped first.
	PendingLabels int
	// RecentExamples is how many examples are remembered for late labels;
	// 0 means 200,000. The least recently arrived is forgotten first.
	RecentExamples int
}

// Default Join sizes.
const (
	DefaultPendingLabels  = 100_000
	DefaultRecentExamples = 200_000
)

// Validate reports the first field that is out of range.
func (c JoinConfig) Validate() error {
	switch {
	case c.PendingLabels < 0:
		return fmt.Errorf("join: PendingLabels is %d, want >= 0", c.PendingLabels)
	case c.RecentExamples < 0:
		return fmt.Errorf("join: RecentExamples is %d, want >= 0", c.RecentExamples)
	}
	return nil
}

// JoinStats counts what a Join has done. All counts are since NewJoin.
type JoinStats struct {
	Pending int // labels waiting for their example now
	Recent  int // examples remembered now

	// LateJoins counts labels that found their example already seen: the
	// usual case. It includes Relabels.
	LateJoins uint64
	// EarlyJoins counts examples that found their label waiting.
	EarlyJoins uint64
	// Relabels counts labels for an example that already had one.
	Relabels uint64
	// PendingEvictions counts labels dropped, unjoined, for room; each is a
	// label lost because its example came too late or never.
	PendingEvictions uint64
	// RecentEvictions counts examples forgotten for room; a label that comes
	// for one afterwards waits as pending.
	RecentEvictions uint64
}

// Join matches labels to the examples they are for, whichever comes first,
// in bounded memory: it remembers the prediction of recent examples, and
// holds labels whose example has not arrived, each in an LRU of fixed size.
// It is safe for concurrent use.
//
// Re-labels are allowed: a label for an example that already has one is
// joined again (Label returns seen=true and the stored prediction each
// time) and counted in Relabels; it is the caller's choice to train on it.
// Before the example arrives, a second label for it replaces the first.
type Join struct {
	mu      sync.Mutex
	pending *simplelru.LRU[string, string]
	recent  *simplelru.LRU[string, *recentExample]
	stats   JoinStats
}

type recentExample struct {
	pred    Prediction
	labeled bool
}

// NewJoin returns an empty Join sized by cfg.
func NewJoin(cfg JoinConfig) (*Join, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pendingSize, recentSize := cfg.PendingLabels, cfg.RecentExamples
	if pendingSize == 0 {
		pendingSize = DefaultPendingLabels
	}
	if recentSize == 0 {
		recentSize = DefaultRecentExamples
	}
	// Evictions are counted from Add's result, not a callback, which
	// simplelru also calls on Remove.
	pending, err := simplelru.NewLRU[string, string](pendingSize, nil)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	recent, err := simplelru.NewLRU[string, *recentExample](recentSize, nil)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	return &Join{pending: pending, recent: recent}, nil
}

// Example records that example id arrived and was predicted pred, and
// returns the label that was waiting for it, if any (no longer pending).
// labeled says the example carried its own label. An id that arrives again
// replaces the prediction remembered for it.
func (j *Join) Example(id string, pred Prediction, labeled bool) (label string, ok bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	label, ok = j.pending.Peek(id)
	if ok {
		j.pending.Remove(id)
		j.stats.EarlyJoins++
	}
	labeled = labeled || ok
	if ex, seen := j.recent.Peek(id); seen && ex.labeled {
		labeled = true // a redelivered example keeps its label
	}
	if j.recent.Add(id, &recentExample{pred: pred, labeled: labeled}) {
		j.stats.RecentEvictions++
	}
	return label, ok
}

// Label joins a label to example id. If the example was seen recently, it
// returns its prediction and seen=true, first=true when the example had no
// label before, and the example stays remembered for further labels.
// Otherwise the label waits for the example, and seen is false.
func (j *Join) Label(id, label string) (pred Prediction, seen, first bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	// Peek, not Get: a label must not keep its example longer than the
	// examples that arrived after it.
	if ex, ok := j.recent.Peek(id); ok {
		j.stats.LateJoins++
		if ex.labeled {
			j.stats.Relabels++
		}
		first = !ex.labeled
		ex.labeled = true
		return ex.pred, true, first
	}
	if j.pending.Add(id, label) {
		j.stats.PendingEvictions++
	}
	return Prediction{}, false, false
}

// Pending reports whether a label waits for example id.
func (j *Join) Pending(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.pending.Contains(id)
}

// Stats returns the counts so far.
func (j *Join) Stats() JoinStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.stats
	s.Pending = j.pending.Len()
	s.Recent = j.recent.Len()
	return s
}
