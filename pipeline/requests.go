package pipeline

import (
	"time"

	"streamer/online/active"
)

// LabelRequest asks the labelers for the label of an example of the
// window: the request the learner chose, and where the example was read.
type LabelRequest struct {
	active.Request
	Source Source `json:"source"`
}

// requester is what the pipeline keeps for label requests: the selector,
// and the source of each example the window may still hold.
type requester struct {
	selector *active.Selector
	sources  map[string]Source
	// coverRows is the window's size when the last pool without a model
	// was built.
	coverRows int
}

// newRequester returns a requester for cfg, or nil when its budget makes
// no requests.
func newRequester(cfg active.Config) (*requester, error) {
	if cfg.Budget.Zero() {
		return nil, nil
	}
	s, err := active.NewSelector(cfg)
	if err != nil {
		return nil, err
	}
	return &requester{selector: s, sources: map[string]Source{}}, nil
}

// arrived records an example read at src. The caller holds p.mu.
func (p *Pipeline) arrived(id string, src Source) {
	p.requests.selector.Arrived(1)
	p.keepSource(id, src)
}

// keepSource records where example id was read, for its request, and
// forgets those of examples the window no longer holds once they are
// many. The caller holds p.mu.
func (p *Pipeline) keepSource(id string, src Source) {
	r := p.requests
	r.sources[id] = src
	if len(r.sources) > 2*max(p.cfg.Learner.Window.MaxExamples, 1024) {
		for id := range r.sources {
			if !p.learner.Contains(id) {
				delete(r.sources, id)
			}
		}
	}
}

// Requests returns the label requests the budget allows now (none without
// Config.Requests), chosen from the window by the newest model, or before
// any by the graph alone. It is meant for the goroutine that solves: it
// ranks the window's rows and never waits for scoring.
func (p *Pipeline) Requests(now time.Time) []LabelRequest {
	r := p.requests
	if r == nil || !r.selector.Owes(now) {
		return nil
	}
	p.refreshPool()
	chosen := r.selector.Choose(now)
	if len(chosen) == 0 {
		return nil
	}
	out := make([]LabelRequest, len(chosen))
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, req := range chosen {
		out[i] = LabelRequest{Request: req, Source: r.sources[req.ID]}
	}
	return out
}

// refreshPool hands the selector the newest solve's pool, or, before any
// model, a pool of the window as it is once it grew by a tenth (at least
// coverGrowth rows) since the last.
func (p *Pipeline) refreshPool() {
	r := p.requests
	if pool := p.learner.RequestPool(); pool != nil {
		if pool != r.selector.Pool() {
			r.selector.SetPool(pool)
		}
		return
	}
	rows, _ := p.learner.WindowSize()
	if cur := r.selector.Pool(); cur != nil && rows-r.coverRows < max(coverGrowth, r.coverRows/10) {
		return
	}
	r.coverRows = rows
	r.selector.SetPool(p.learner.CoverPool())
}

// coverGrowth is the fewest new rows after which a pool without a model
// is built again.
const coverGrowth = 10

// RecallRequests remembers the label requests made before a restart, read
// back from their topic once the window was rebuilt: their examples are
// not requested again, and a label for one answers it, so that an answer
// to a chosen request is not taken for a label that came unasked. Those
// answered before the restart are marked chosen in the window as Label
// marks them. It returns how many it recalled: those of examples in the
// window.
func (p *Pipeline) RecallRequests(reqs []LabelRequest, now time.Time) int {
	r := p.requests
	if r == nil {
		return 0
	}
	n := 0
	for _, req := range reqs {
		if !p.learner.Contains(req.ID) {
			continue
		}
		answered := p.learner.HasLabel(req.ID)
		r.selector.Recall(req.Request, answered, now)
		if answered && req.Reason.Strategy != active.StrategyRandom {
			p.learner.Chosen(req.ID)
		}
		n++
	}
	return n
}

// RequestStats returns the counts of label requests and their answers;
// false without Config.Requests.
func (p *Pipeline) RequestStats() (active.Stats, bool) {
	if p.requests == nil {
		return active.Stats{}, false
	}
	return p.requests.selector.Stats(), true
}
