package drift

import (
	"fmt"
	"math"
)

// BernoulliConfig describes a BernoulliCUSUM. Zero fields mean the
// defaults written beside them.
type BernoulliConfig struct {
	// Threshold is h: the CUSUM alarms once its log-likelihood ratio
	// exceeds it. While the rate does not change, the mean number of
	// outcomes between false alarms is at least e^h (Lorden 1971); 0
	// means ln(1000), one false alarm in 1,000 outcomes at most.
	Threshold float64
	// Rise is the rise of the rate the CUSUM is tuned to: it weighs
	// p0 + Rise against p0; 0 means 0.3. A rise about that large is found
	// in the fewest outcomes, a much smaller one in many more, and the
	// slow changes of a learner's error (a new model, a class mix moving)
	// stay below it. Where p0 + Rise reaches 1 (a model of many classes
	// wrong most of the time), no such rise can come and the CUSUM
	// rests at 0.
	Rise float64
	// Reference is the number of outcomes, before the newest Recent ones,
	// whose rate is p0; 0 means 50. Recent is kept out of p0 so that the
	// first outcomes of a change do not raise it before the CUSUM's
	// excursion, which is kept out too, has begun; 0 means 10.
	Reference int
	Recent    int
}

func (c BernoulliConfig) withDefaults() BernoulliConfig {
	if c.Threshold == 0 {
		c.Threshold = math.Log(1e3)
	}
	if c.Rise == 0 {
		c.Rise = 0.3
	}
	if c.Reference == 0 {
		c.Reference = 50
	}
	if c.Recent == 0 {
		c.Recent = 10
	}
	return c
}

// Validate names the first bad field.
func (c BernoulliConfig) Validate() error {
	switch {
	case c.Threshold < 0:
		return fmt.Errorf("threshold must be > 0, got %v", c.Threshold)
	case c.Rise < 0 || c.Rise >= 1:
		return fmt.Errorf("rise must be in (0, 1), got %v", c.Rise)
	case c.Reference < 0 || c.Reference > 0 && c.Reference < minReference:
		return fmt.Errorf("reference must be >= %d, got %d", minReference, c.Reference)
	case c.Recent < 0:
		return fmt.Errorf("recent must be >= 0, got %d", c.Recent)
	}
	return nil
}

// minReference is the fewest outcomes p0 is estimated from before the
// CUSUM runs.
const minReference = 20

// BernoulliCUSUM watches 0/1 outcomes, a model's prequential errors, for
// a rise of their rate: Page's one-sided CUSUM of the log-likelihood
// ratio of p1 = p0 + Rise against p0,
//
//	S ← max(0, S + ln(p1/p0))             on an error,
//	S ← max(0, S + ln((1−p1)/(1−p0)))     on a success,
//
// alarming when S > Threshold. p0 is not known: it is the rate of the
// Reference outcomes before the newest Recent, or before the current
// excursion of S above 0 when that is longer, so that the outcomes of a
// change do not raise it while the CUSUM weighs them; it is raised by its
// standard error, so that a reference that underestimates it by chance
// does not shorten the time to a false alarm below e^Threshold. The
// change is estimated to begin at the first outcome after S was last 0
// (the maximum-likelihood change point of the CUSUM). While p0 + Rise
// reaches 1, S stays 0: holding p0 under its estimate to make room for
// the rise would break the false-alarm bound, which holds only where p0
// is at least the true rate, and let every long run of a mostly wrong
// model's errors alarm.
type BernoulliCUSUM struct {
	// cfg is the configuration in force, base the one it was made with
	// (RaiseThreshold raises cfg's Threshold and Reference above base's).
	cfg, base BernoulliConfig
	// errors[i % len] is the number of errors among the first i+1
	// outcomes since the reset, for the newest len(errors).
	errors []int64
	n      int64 // outcomes since the reset
	s      float64
	since  int64 // position of the first outcome of the excursion
	run    int64 // outcomes in the excursion of S above 0
	from   int64 // the reference starts no earlier (trim)
}

// raise is how many standard errors p0 is raised by: the reference leaves
// out the excursion, which begins with an error, and so errs low.
const raise = 1.5

// excursionSpan bounds, in References, how far back an excursion pushes
// the reference: one longer than that is a change in all likelihood,
// which the CUSUM has alarmed at, or one too small to matter.
const excursionSpan = 4

// NewBernoulliCUSUM returns a detector with no outcomes.
func NewBernoulliCUSUM(cfg BernoulliConfig) *BernoulliCUSUM {
	cfg = cfg.withDefaults()
	most := maxReference * cfg.Reference
	return &BernoulliCUSUM{cfg: cfg, base: cfg, errors: make([]int64, (excursionSpan+1)*most+cfg.Recent+1)}
}

// maxReference bounds, in configured References, how far RaiseThreshold
// lengthens the reference.
const maxReference = 8

// Add counts an outcome (wrong: an error) at position, and reports
// whether the detector alarms. It does not reset itself.
func (d *BernoulliCUSUM) Add(wrong bool, position int64) bool {
	d.push(wrong)
	errs, ref := d.reference()
	if ref < minReference {
		return false
	}
	p := (float64(errs) + 0.5) / (float64(ref) + 1)
	p0 := p + raise*math.Sqrt(p*(1-p)/float64(ref))
	p1 := p0 + d.cfg.Rise
	if p1 >= 1 {
		d.s, d.run = 0, 0
		return false
	}
	llr := math.Log((1 - p1) / (1 - p0))
	if wrong {
		llr = math.Log(p1 / p0)
	}
	if d.s == 0 || position < d.since {
		d.since = position
	}
	d.s = max(0, d.s+llr)
	d.run++
	if d.s == 0 {
		d.run = 0
	}
	return d.s > d.cfg.Threshold
}

// push counts an outcome.
func (d *BernoulliCUSUM) push(wrong bool) {
	var before int64
	if d.n > 0 {
		before = d.errors[(d.n-1)%int64(len(d.errors))]
	}
	if wrong {
		before++
	}
	d.errors[d.n%int64(len(d.errors))] = before
	d.n++
}

// reference returns the errors and the outcomes p0 is estimated from: the
// Reference before the newest Recent, or before the excursion, and after
// the rate last fell (trim).
func (d *BernoulliCUSUM) reference() (errs int64, n int) {
	lag := max(int64(d.cfg.Recent), min(d.run, excursionSpan*int64(d.cfg.Reference)))
	end := d.n - lag // outcomes [from, end) are the reference
	d.from = max(d.from, end-int64(d.cfg.Reference), 0)
	if end-d.from < 2*trimPart {
		return 0, 0
	}
	d.trim(end)
	return d.at(end) - d.at(d.from), int(end - d.from)
}

// at returns the errors among the first i outcomes since the reset; i is
// one of the newest len(errors).
func (d *BernoulliCUSUM) at(i int64) int64 {
	if i == 0 {
		return 0
	}
	return d.errors[(i-1)%int64(len(d.errors))]
}

// trimPart is the fewest outcomes on either side of a split that trim
// tests, and the step between the splits it tests.
const trimPart = 5

// trimThreshold is the log-likelihood ratio of a fall of the rate at
// which trim drops the reference's older part. It is low: a learner's
// error falls gradually, which a split tests weakly. A part dropped by
// chance shortens the reference, whose error the raise of p0 covers, but
// for trimKept.
const trimThreshold = 3.0

// trimKept is the share of the Reference that trim keeps at least, its
// newest outcomes. A fall among the newest few is as often a run of
// successes by chance: a p0 taken from that run alone lies under the
// rate, and the next few errors alarm (TestBernoulliCUSUMLuckyRun).
const trimKept = 0.7

// trim drops the older part of the reference [from, end) where the rate
// was higher than after it, beyond chance: the generalized likelihood
// ratio of two rates against one, n0·kl(p̂0, p̂) + n1·kl(p̂1, p̂), above
// trimThreshold, the newer part holding trimKept of the Reference at
// least. A learner's first models err more than the later ones,
// and after an alarm the model re-solved errs more until it has learned;
// a p0 counting those errors would leave the CUSUM deaf to what comes
// next. It keeps the split of largest ratio.
func (d *BernoulliCUSUM) trim(end int64) {
	e0 := d.at(d.from)
	total, n := float64(d.at(end)-e0), float64(end-d.from)
	best, cut := trimThreshold, int64(-1)
	kept := max(trimPart, int64(math.Ceil(trimKept*float64(d.cfg.Reference))))
	for s := d.from + trimPart; s <= end-kept; s += trimPart {
		older := float64(d.at(s) - e0)
		n0 := float64(s - d.from)
		p0, p1 := older/n0, (total-older)/(n-n0)
		if p0 <= p1 {
			continue
		}
		p := total / n
		if glr := n0*kl(p0, p) + (n-n0)*kl(p1, p); glr > best {
			best, cut = glr, s
		}
	}
	if cut >= 0 {
		d.from = cut
	}
}

// kl is the Kullback–Leibler divergence of Bernoulli(p) from Bernoulli(q).
func kl(p, q float64) float64 {
	return xlogy(p, p/q) + xlogy(1-p, (1-p)/(1-q))
}

func xlogy(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return x * math.Log(y)
}

// Statistic returns S, the log-likelihood ratio of a rise since the
// change estimated.
func (d *BernoulliCUSUM) Statistic() float64 { return d.s }

// Threshold returns h.
func (d *BernoulliCUSUM) Threshold() float64 { return d.cfg.Threshold }

// RaiseThreshold makes h the threshold from the next outcome on, or the
// configured one where that is higher. A threshold above the configured
// one lengthens the reference by the square of their ratio (up to
// maxReference times): a p0 estimated from too few outcomes errs low
// often enough that the false alarms it brings, not h, would bound the
// time between them (TestBernoulliCUSUMRaisedThreshold). A reference
// lengthened takes in outcomes as they come.
func (d *BernoulliCUSUM) RaiseThreshold(h float64) {
	d.cfg.Threshold = max(d.base.Threshold, h)
	ratio := d.cfg.Threshold / d.base.Threshold
	d.cfg.Reference = min(maxReference*d.base.Reference, int(math.Round(float64(d.base.Reference)*ratio*ratio)))
}

// Since returns the position where the change is estimated to begin.
func (d *BernoulliCUSUM) Since() int64 { return d.since }

// Reset forgets every outcome.
func (d *BernoulliCUSUM) Reset() { d.n, d.s, d.run, d.from = 0, 0, 0, 0 }

// CUSUMConfig describes a CUSUM. Zero fields mean the defaults written
// beside them.
type CUSUMConfig struct {
	// Allowance is κ, subtracted from each value: half the rise of the
	// mean, in standard deviations, that the CUSUM is tuned to; 0 means
	// 0.25.
	Allowance float64
	// Threshold is h. While the values are independent standard normals,
	// 2κ·S is the log-likelihood ratio CUSUM of N(2κ, 1) against N(0, 1),
	// and the mean number of values between false alarms is at least
	// e^{2κh} (Lorden 1971); 0 means 23 (e^11.5, some 99,000, at κ = 0.25).
	Threshold float64
}

func (c CUSUMConfig) withDefaults() CUSUMConfig {
	if c.Allowance == 0 {
		c.Allowance = 0.25
	}
	if c.Threshold == 0 {
		c.Threshold = 23
	}
	return c
}

// Validate names the first bad field.
func (c CUSUMConfig) Validate() error {
	switch {
	case c.Allowance < 0:
		return fmt.Errorf("allowance must be > 0, got %v", c.Allowance)
	case c.Threshold < 0:
		return fmt.Errorf("threshold must be > 0, got %v", c.Threshold)
	}
	return nil
}

// CUSUM watches values that are standard (mean 0, variance 1) while
// nothing changes, for a rise of their mean: S ← max(0, S + z − κ),
// alarming when S > h (Page 1954). The change is estimated to begin at
// the first value after S was last 0.
type CUSUM struct {
	cfg        CUSUMConfig
	configured float64 // the threshold it was made with
	s          float64
	since      int64
}

// NewCUSUM returns a detector with no values.
func NewCUSUM(cfg CUSUMConfig) *CUSUM {
	cfg = cfg.withDefaults()
	return &CUSUM{cfg: cfg, configured: cfg.Threshold}
}

// Add counts the value z at position, and reports whether the detector
// alarms.
func (d *CUSUM) Add(z float64, position int64) bool {
	if d.s == 0 {
		d.since = position
	}
	d.s = max(0, d.s+z-d.cfg.Allowance)
	return d.s > d.cfg.Threshold
}

// Statistic returns S.
func (d *CUSUM) Statistic() float64 { return d.s }

// Threshold returns h.
func (d *CUSUM) Threshold() float64 { return d.cfg.Threshold }

// RaiseThreshold makes h the threshold from the next value on, or the
// configured one where that is higher.
func (d *CUSUM) RaiseThreshold(h float64) { d.cfg.Threshold = max(d.configured, h) }

// Since returns the position where the change is estimated to begin.
func (d *CUSUM) Since() int64 { return d.since }

// Reset forgets every value.
func (d *CUSUM) Reset() { d.s = 0 }
