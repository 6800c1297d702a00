package drift

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// The detectors a Monitor runs, by the name alarms and statistics carry.
const (
	// Labels is the BernoulliCUSUM on the prequential errors of the model
	// in force: a change the labels confirm.
	Labels = "labels"
	// Neighbours is the CUSUM on the Recency of arrivals' nearest window
	// rows: inputs the window has not seen before, without labels.
	Neighbours = "neighbours"
	// Scores is ADWIN on the uncertainty of the model's predictions (one
	// minus the probability of the class predicted), without labels.
	Scores = "scores"
)

// Detectors lists the detectors in the order Status reports them.
var Detectors = []string{Labels, Neighbours, Scores}

// Config describes a Monitor. Zero fields mean the defaults of the types
// they hold.
type Config struct {
	// Off turns detectors off by name (Labels, Neighbours, Scores).
	Off        map[string]bool
	Labels     BernoulliConfig
	Neighbours CUSUMConfig
	Scores     ADWINConfig
	// Spacing is the fewest stream positions between two alarms of one
	// detector; 0 means 2000. After an alarm the detector starts again
	// from nothing, and what it is given before the spacing has passed
	// is ignored: the model the alarm made the learner re-solve is
	// judged on what comes after.
	Spacing int64
	// FalseAlarmExamples, where > 0, raises the thresholds of the labels
	// and neighbours detectors above their configured ones where the
	// stream gives them so many observations per position that their
	// stated bound would let them alarm falsely more than once in
	// FalseAlarmExamples positions: the labels detector's to
	// ln(FalseAlarmExamples × outcomes per position), the neighbours
	// detector's to ln(FalseAlarmExamples × values per position) /
	// (2·Allowance), each rate measured over its newest rateSpan
	// observations. 0 keeps the thresholds as configured.
	FalseAlarmExamples float64
}

// Validate names the first bad field.
func (c Config) Validate() error {
	for name := range c.Off {
		if !slices.Contains(Detectors, name) {
			return fmt.Errorf("detectors: unknown detector %q (want labels, neighbours or scores)", name)
		}
	}
	if err := c.Labels.Validate(); err != nil {
		return fmt.Errorf("labels: %w", err)
	}
	if err := c.Neighbours.Validate(); err != nil {
		return fmt.Errorf("neighbours: %w", err)
	}
	if err := c.Scores.Validate(); err != nil {
		return fmt.Errorf("scores: %w", err)
	}
	if c.Spacing < 0 {
		return fmt.Errorf("spacing must be >= 0, got %d", c.Spacing)
	}
	if c.FalseAlarmExamples < 0 {
		return fmt.Errorf("false alarm examples must be >= 0, got %v", c.FalseAlarmExamples)
	}
	return nil
}

// Alarm is a detector's signal that the stream changed.
type Alarm struct {
	Detector string
	// Statistic is the detector's statistic when it alarmed, Threshold
	// what it exceeded.
	Statistic, Threshold float64
	// At is the stream position given with the observation that alarmed;
	// Since the position where the detector estimates the change began,
	// in the positions its observations were given with.
	At, Since int64
}

// Status is a detector's state, for metrics.
type Status struct {
	Detector             string
	On                   bool
	Statistic, Threshold float64
	Alarms               int
}

// Monitor runs the detectors that are on, each reset after its alarm and
// deaf until Spacing positions have passed. It is not safe for
// concurrent use: its owner feeds it from one goroutine, or under a lock.
type Monitor struct {
	cfg        Config
	labels     *BernoulliCUSUM
	neighbours *CUSUM
	scores     *ADWIN
	// deaf holds, by detector, the position before which it ignores what
	// it is given; alarms counts each one's alarms.
	deaf   map[string]int64
	alarms map[string]int
	// recency is the level of Recency since the neighbours detector's
	// last alarm.
	recency level
	// outcomes and values measure how many observations the labels and
	// neighbours detectors are given per position.
	outcomes, values rate
}

// NewMonitor returns a monitor with no observations.
func NewMonitor(cfg Config) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Spacing == 0 {
		cfg.Spacing = 2000
	}
	return &Monitor{
		cfg:        cfg,
		labels:     NewBernoulliCUSUM(cfg.Labels),
		neighbours: NewCUSUM(cfg.Neighbours),
		scores:     NewADWIN(cfg.Scores),
		deaf:       map[string]int64{},
		alarms:     map[string]int{},
	}, nil
}

// logBound counts in r an observation given at position now and returns
// ln(FalseAlarmExamples × observations per position): the log-likelihood
// ratio a detector with that rate must reach to alarm falsely at most once
// in FalseAlarmExamples positions. It returns false while
// FalseAlarmExamples is 0 or the rate is not measured yet.
func (m *Monitor) logBound(r *rate, now int64) (float64, bool) {
	if m.cfg.FalseAlarmExamples == 0 {
		return 0, false
	}
	r.add(now)
	per := r.perPosition()
	if per == 0 {
		return 0, false
	}
	return math.Log(m.cfg.FalseAlarmExamples * per), true
}

// On reports whether the detector of that name runs.
func (m *Monitor) On(name string) bool { return !m.cfg.Off[name] }

// Listens reports whether the named detector takes what it is given at
// position now: it runs, and is not deaf after an alarm.
func (m *Monitor) Listens(name string, now int64) bool {
	return m.On(name) && now >= m.deaf[name]
}

// Outcome is a prequential outcome as the labels detector is given it:
// whether the prediction was wrong, and the example's position.
type Outcome struct {
	Wrong   bool
	Example int64
}

// Deaf returns, by detector, the position before which it ignores what
// it is given (after its alarm, or a Restart); a detector not listed
// listens.
func (m *Monitor) Deaf() map[string]int64 { return maps.Clone(m.deaf) }

// Alarmed returns each detector's alarms so far; a detector not listed
// has none.
func (m *Monitor) Alarmed() map[string]int { return maps.Clone(m.alarms) }

// State is what a monitor's watch carries across a restart: each
// detector's alarms and the position it is deaf until, and the outcomes
// the labels detector was given since it last started again, in order.
type State struct {
	Deaf     map[string]int64
	Alarms   map[string]int
	Outcomes []Outcome
}

// Resume takes up the watch of another monitor, as a process restarted
// from a snapshot does: each detector counts the other's alarms and is
// deaf until the position it was, and the labels detector, started
// again, is given the outcomes, so that a change that began before the
// restart is weighed as if there had been none. It raises no alarm; the
// next outcome raises one the statistic calls for. Unknown detectors
// are ignored.
func (m *Monitor) Resume(st State) {
	for name, at := range st.Deaf {
		if m.detector(name) != nil {
			m.deaf[name] = at
		}
	}
	for name, n := range st.Alarms {
		if m.detector(name) != nil {
			m.alarms[name] = n
		}
	}
	m.labels.Reset()
	if !m.On(Labels) {
		return
	}
	// The rates are measured again from the outcomes that come: these
	// carry example positions, not the stream's.
	for _, o := range st.Outcomes {
		m.labels.Add(o.Wrong, o.Example)
	}
}

// Outcome gives the labels detector a prequential outcome: whether the
// prediction made at the example's arrival was wrong. example is the
// example's position (what the alarm's Since is told in), now the
// stream's.
func (m *Monitor) Outcome(wrong bool, example, now int64) (Alarm, bool) {
	if !m.On(Labels) {
		return Alarm{}, false
	}
	if h, ok := m.logBound(&m.outcomes, now); ok {
		m.labels.RaiseThreshold(h)
	}
	if !m.Listens(Labels, now) || !m.labels.Add(wrong, example) {
		return Alarm{}, false
	}
	return m.fire(Labels, now), true
}

// Recency gives the neighbours detector an arrival's Recency z at
// position now. After its alarm the detector measures, while it is deaf,
// the level z stays at, and then watches for a rise above that level:
// arrivals of a class that appeared keep finding only the rows since it
// did until the window has turned over, which is the change it alarmed
// at, not a new one.
func (m *Monitor) Recency(z float64, now int64) (Alarm, bool) {
	if !m.On(Neighbours) {
		return Alarm{}, false
	}
	if h, ok := m.logBound(&m.values, now); ok {
		m.neighbours.RaiseThreshold(h / (2 * m.neighbours.cfg.Allowance))
	}
	if now < m.deaf[Neighbours] {
		m.recency.add(z)
		return Alarm{}, false
	}
	m.recency.settle()
	if !m.neighbours.Add(m.recency.standardize(z), now) {
		return Alarm{}, false
	}
	a := m.fire(Neighbours, now)
	m.recency.begin()
	return a, true
}

// Uncertainty gives the scores detector an arrival's uncertainty, one
// minus the probability of the class predicted, at position now.
func (m *Monitor) Uncertainty(u float64, now int64) (Alarm, bool) {
	if !m.Listens(Scores, now) || !m.scores.Add(u, now) {
		return Alarm{}, false
	}
	return m.fire(Scores, now), true
}

// detector is what a Monitor reads of each of its detectors.
type detector interface {
	Statistic() float64
	Threshold() float64
	Since() int64
	Reset()
}

// detector returns the detector of that name, nil for an unknown name.
func (m *Monitor) detector(name string) detector {
	switch name {
	case Labels:
		return m.labels
	case Neighbours:
		return m.neighbours
	case Scores:
		return m.scores
	}
	return nil
}

// Reset starts the detector again from nothing.
func (m *Monitor) Reset(name string) {
	if d := m.detector(name); d != nil {
		d.Reset()
	}
}

// Restart starts the detector again from nothing, deaf for Spacing
// positions from now: what it watches is about to change by the
// caller's doing (a model re-solved on a window that forgot its labels),
// and that is not an alarm.
func (m *Monitor) Restart(name string, now int64) {
	m.Reset(name)
	m.deaf[name] = now + m.cfg.Spacing
}

// fire returns the alarm of the named detector at position now, counts
// it, starts the detector again and makes it deaf for Spacing positions.
func (m *Monitor) fire(name string, now int64) Alarm {
	d := m.detector(name)
	a := Alarm{Detector: name, Statistic: d.Statistic(), Threshold: d.Threshold(), At: now, Since: d.Since()}
	d.Reset()
	m.alarms[name]++
	m.deaf[name] = now + m.cfg.Spacing
	return a
}

// Status returns every detector's state, in the order of Detectors.
func (m *Monitor) Status() []Status {
	out := make([]Status, 0, len(Detectors))
	for _, name := range Detectors {
		d := m.detector(name)
		out = append(out, Status{Detector: name, On: m.On(name), Alarms: m.alarms[name], Statistic: d.Statistic(), Threshold: d.Threshold()})
	}
	return out
}

// level is the mean and standard deviation of standard values measured
// over a stretch (after an alarm), by which later values are
// standardized again; until one is measured, values pass as they are.
type level struct {
	measuring bool
	n         int
	sum, sq   float64
	mean, sd  float64
	set       bool
}

// minLevel is the fewest values a level is measured from.
const minLevel = 50

// begin starts measuring a new level.
func (l *level) begin() { *l = level{measuring: true, mean: l.mean, sd: l.sd, set: l.set} }

func (l *level) add(z float64) {
	if l.measuring {
		l.n++
		l.sum, l.sq = l.sum+z, l.sq+z*z
	}
}

// settle ends the measuring: the level measured replaces the last when
// it had values enough. The sd is at least 1, the values' own under the
// null: a level is never tighter than a stationary stream's.
func (l *level) settle() {
	if !l.measuring {
		return
	}
	l.measuring = false
	if l.n < minLevel {
		return
	}
	mean := l.sum / float64(l.n)
	l.mean, l.sd, l.set = mean, math.Sqrt(max(1, l.sq/float64(l.n)-mean*mean)), true
}

func (l *level) standardize(z float64) float64 {
	if !l.set {
		return z
	}
	return (z - l.mean) / l.sd
}

// rateSpan is how many of the newest observations a rate is measured
// over, and minRate the fewest it is measured from.
const (
	rateSpan = 256
	minRate  = 32
)

// rate measures how many observations come per stream position.
type rate struct {
	at [rateSpan]int64 // positions of the newest observations, a ring
	n  int
}

func (r *rate) add(position int64) {
	r.at[r.n%rateSpan] = position
	r.n++
}

// perPosition returns the observations per position over the newest
// rateSpan, 0 while fewer than minRate were counted or they span no
// positions.
func (r *rate) perPosition() float64 {
	k := min(r.n, rateSpan)
	if k < minRate {
		return 0
	}
	span := r.at[(r.n-1)%rateSpan] - r.at[(r.n-k)%rateSpan]
	if span <= 0 {
		return 0
	}
	return float64(k-1) / float64(span)
}
