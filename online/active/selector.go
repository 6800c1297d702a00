package active

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes a Selector. Zero fields mean the defaults written
// beside them.
type Config struct {
	// Budget is how many requests to make; the zero Budget makes none.
	Budget Budget
	// RandomShare is the share of the budget drawn at random among the
	// unlabeled rows, in [0, 1].
	RandomShare float64
	// Expiry is how long a request waits for its answer; 0 means an hour.
	// An answer after it is still a label, but not one in time.
	Expiry time.Duration
	// Seed seeds the random draws.
	Seed uint64
}

func (c Config) withDefaults() Config {
	if c.Expiry == 0 {
		c.Expiry = time.Hour
	}
	return c
}

// Validate names the first bad field, by its key's last part.
func (c Config) Validate() error {
	switch {
	case c.Budget.PerMinute < 0 || c.Budget.Fraction < 0 || c.Budget.Fraction > 1:
		return fmt.Errorf("budget %s: want a fraction in [0, 1] or a rate >= 0", c.Budget)
	case c.RandomShare < 0 || c.RandomShare > 1:
		return fmt.Errorf("random_share must be in [0, 1], got %v", c.RandomShare)
	case c.Expiry < 0:
		return fmt.Errorf("expiry must be >= 0, got %v", c.Expiry)
	}
	return nil
}

// Request asks for the label of one example of the window.
type Request struct {
	ID string `json:"id"`
	// Predicted is the class the model that chose it predicts, Probs its
	// distribution ("" and nil before any model).
	Predicted string             `json:"predicted,omitempty"`
	Probs     map[string]float64 `json:"probs,omitempty"`
	Reason    Reason             `json:"reason"`
	// Epoch and Version stamp the model that chose it (0 before any).
	Epoch   uint64    `json:"model_epoch"`
	Version uint64    `json:"model_version"`
	At      time.Time `json:"requested_at"`
	Expires time.Time `json:"expires_at"`
}

// Stats counts a Selector's requests and their answers, by strategy.
type Stats struct {
	Sent, Answered, InTime, Expired map[string]uint64
	// Scored counts the answered requests that carried a prediction,
	// Right those whose prediction was the answer.
	Scored, Right map[string]uint64
}

func newStats() Stats {
	return Stats{Sent: map[string]uint64{}, Answered: map[string]uint64{}, InTime: map[string]uint64{},
		Expired: map[string]uint64{}, Scored: map[string]uint64{}, Right: map[string]uint64{}}
}

func (s Stats) clone() Stats {
	out := newStats()
	for _, p := range [][2]map[string]uint64{{out.Sent, s.Sent}, {out.Answered, s.Answered}, {out.InTime, s.InTime},
		{out.Expired, s.Expired}, {out.Scored, s.Scored}, {out.Right, s.Right}} {
		for k, v := range p[1] {
			p[0][k] = v
		}
	}
	return out
}

// asked is what a Selector remembers of a request.
type asked struct {
	req      Request
	pending  bool // neither answered nor expired
	answered bool
}

// Selector chooses label requests from a Pool within a budget. Arrived may
// be called from any goroutine without waiting; the other methods take a
// short lock, and Choose does its ranking outside it. It is safe for
// concurrent use.
type Selector struct {
	cfg     Config
	arrived atomic.Int64

	mu    sync.Mutex // guards the fields below
	pool  *Pool
	rowOf map[string]int
	taken []bool // rows of pool labeled or requested
	asked map[string]*asked
	// tokens and randomTokens are the requests owed, chosen and random.
	tokens, randomTokens float64
	last                 time.Time
	// raise multiplies what the next raiseLeft arrivals add to a budget.
	raise     float64
	raiseLeft int64
	rand      *rand.Rand
	stats     Stats
}

// NewSelector returns a Selector without a pool.
func NewSelector(cfg Config) (*Selector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Selector{cfg: cfg, asked: map[string]*asked{}, rand: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)), stats: newStats()}, nil
}

// Arrived counts n examples that arrived: a fraction budget accrues by
// them.
func (s *Selector) Arrived(n int) { s.arrived.Add(int64(n)) }

// SetPool makes pool the rows Choose chooses from. Requests of ids that
// left the window are forgotten once answered or expired.
func (s *Selector) SetPool(pool *Pool) {
	rowOf := make(map[string]int, pool.Len())
	for i, id := range pool.IDs {
		rowOf[id] = i
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pool, s.rowOf = pool, rowOf
	s.taken = make([]bool, pool.Len())
	for i, l := range pool.Labels {
		s.taken[i] = l != ""
	}
	for id, a := range s.asked {
		if i, ok := rowOf[id]; ok {
			s.taken[i] = true
		} else if !a.pending {
			delete(s.asked, id)
		}
	}
}

// Pool returns the pool in use, nil before SetPool.
func (s *Selector) Pool() *Pool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pool
}

// Labeled records a label of id, requested or not: id is not requested
// again. It returns the request the label answers, if id was requested
// and not answered yet, and whether the answer came before the request
// expired.
func (s *Selector) Labeled(id, label string, now time.Time) (req Request, answers, inTime bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.rowOf[id]; ok {
		s.taken[i] = true
	}
	a, ok := s.asked[id]
	if !ok || a.answered {
		return Request{}, false, false
	}
	strategy := a.req.Reason.Strategy
	inTime = !now.After(a.req.Expires)
	if a.pending && !inTime {
		s.stats.Expired[strategy]++
	}
	a.pending, a.answered = false, true
	s.stats.Answered[strategy]++
	if inTime {
		s.stats.InTime[strategy]++
	}
	if a.req.Predicted != "" {
		s.stats.Scored[strategy]++
		if a.req.Predicted == label {
			s.stats.Right[strategy]++
		}
	}
	return a.req, true, inTime
}

// Recall remembers a request made before a restart, read back from where
// it was written: its example is not requested again, and a label for it
// answers it. answered says its answer came before the restart. It counts
// nothing: the process that made the request counted it, and counted its
// answer or its expiry if either came by now.
func (s *Selector) Recall(req Request, answered bool, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.asked[req.ID]; ok {
		return
	}
	s.asked[req.ID] = &asked{req: req, pending: !answered && !now.After(req.Expires), answered: answered}
	if i, ok := s.rowOf[req.ID]; ok {
		s.taken[i] = true
	}
}

// Stats returns the counts so far.
func (s *Selector) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.clone()
}

// Choose returns the requests the budget allows now, best first: the
// random share drawn first, then the rows of highest score, each chosen
// as if the ones before it were labeled (their neighbours lose reach and
// come nearer a label). It returns none without a pool or budget.
func (s *Selector) Choose(now time.Time) []Request {
	pool, taken, chosen, random := s.owed(now)
	if chosen+random == 0 {
		return nil
	}
	r := newRanker(pool, taken)
	var rows []int
	var reasons []Reason
	for range random {
		i := s.draw(r)
		if i < 0 {
			break
		}
		rs := r.reason(i)
		rs.Strategy = StrategyRandom
		r.take(i)
		rows, reasons = append(rows, i), append(reasons, rs)
	}
	drawn := len(rows)
	for range chosen {
		i, rs := r.best()
		if i < 0 {
			break
		}
		r.take(i)
		rows, reasons = append(rows, i), append(reasons, rs)
	}
	return s.record(pool, rows, reasons, drawn, now)
}

// owed accrues the budget and returns what Choose needs: the pool, a copy
// of its taken rows, and the requests owed, chosen and random.
func (s *Selector) owed(now time.Time) (pool *Pool, taken []bool, chosen, random int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	elapsed := time.Duration(0)
	if !s.last.IsZero() {
		elapsed = now.Sub(s.last)
	} else if s.cfg.Budget.PerMinute > 0 {
		s.tokens, s.randomTokens = 1-s.cfg.RandomShare, s.cfg.RandomShare // requests start at once
	}
	s.last = now
	arrived := s.arrived.Swap(0)
	add := s.cfg.Budget.accrue(max(elapsed, 0), arrived) * s.raised(arrived)
	s.raiseLeft -= min(arrived, s.raiseLeft)
	burst := s.cfg.Budget.burst()
	s.tokens = min(s.tokens+add*(1-s.cfg.RandomShare), burst)
	s.randomTokens = min(s.randomTokens+add*s.cfg.RandomShare, burst)
	if s.pool == nil {
		return nil, nil, 0, 0
	}
	return s.pool, append([]bool(nil), s.taken...), int(s.tokens), int(s.randomTokens)
}

// draw returns an eligible row at random, or -1.
func (s *Selector) draw(r *ranker) int {
	var rows []int
	for i := range r.taken {
		if r.eligible(i) {
			rows = append(rows, i)
		}
	}
	if len(rows) == 0 {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return rows[s.rand.IntN(len(rows))]
}

// record makes requests of the chosen rows of pool (the first drawn of
// them at random) and spends their budget. A row labeled, or an id
// requested, while Choose ranked is left out.
func (s *Selector) record(pool *Pool, rows []int, reasons []Reason, drawn int, now time.Time) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, 0, len(rows))
	for k, i := range rows {
		id := pool.IDs[i]
		if _, ok := s.asked[id]; ok || s.pool == pool && s.taken[i] {
			continue
		}
		req := s.request(pool, i, reasons[k], now)
		s.asked[id] = &asked{req: req, pending: true}
		if s.pool == pool {
			s.taken[i] = true
		}
		if k < drawn {
			s.randomTokens--
		} else {
			s.tokens--
		}
		s.stats.Sent[req.Reason.Strategy]++
		out = append(out, req)
	}
	return out
}

func (s *Selector) request(pool *Pool, i int, rs Reason, now time.Time) Request {
	req := Request{ID: pool.IDs[i], Reason: rs, Epoch: pool.Epoch, Version: pool.Version, At: now, Expires: now.Add(s.cfg.Expiry)}
	if pool.Probs != nil && pool.Probs[i] != nil {
		best, _ := topTwo(pool.Probs[i])
		req.Predicted = pool.Classes[best]
		req.Probs = make(map[string]float64, len(pool.Classes))
		for k, c := range pool.Classes {
			req.Probs[c] = pool.Probs[i][k]
		}
	}
	return req
}

// expire counts the pending requests past their expiry. The caller holds
// mu.
func (s *Selector) expire(now time.Time) {
	for _, a := range s.asked {
		if a.pending && now.After(a.req.Expires) {
			a.pending = false
			s.stats.Expired[a.req.Reason.Strategy]++
		}
	}
}

// Owes reports whether the budget allows a request now, changing
// nothing: Choose would then look for one.
func (s *Selector) Owes(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.IsZero() && s.cfg.Budget.PerMinute > 0 {
		return true
	}
	arrived := s.arrived.Load()
	add := s.cfg.Budget.accrue(max(now.Sub(s.last), 0), arrived) * s.raised(arrived)
	return s.tokens+add*(1-s.cfg.RandomShare) >= 1 || s.randomTokens+add*s.cfg.RandomShare >= 1
}

// Raise makes the budget accrue factor times as fast while the next
// examples arrivals come: a change seen without labels asks for the labels
// that would confirm it sooner. A rate accrues by time, raised in the
// share of each interval's arrivals that fall among those. A later Raise
// replaces an earlier.
func (s *Selector) Raise(factor float64, examples int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raise, s.raiseLeft = max(factor, 1), max(examples, 0)
}

// raised returns the multiplier of what arrived arrivals accrue: factor
// for those within a Raise, one for the others. The caller holds mu.
func (s *Selector) raised(arrived int64) float64 {
	if arrived <= 0 || s.raiseLeft <= 0 {
		return 1
	}
	in := min(arrived, s.raiseLeft)
	return 1 + (s.raise-1)*float64(in)/float64(arrived)
}
