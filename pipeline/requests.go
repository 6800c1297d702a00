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
	r := p.requests
	r.selector.Arrived(1)
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

// RequestStats returns the counts of label requests and their answers;
// false without Config.Requests.
func (p *Pipeline) RequestStats() (active.Stats, bool) {
	if p.requests == nil {
		return active.Stats{}, false
	}
	return p.requests.selector.Stats(), true
}
