package offline

import (
	"cmp"
	"slices"
)

// ReviewScores score review routing over every example of a run (eval's
// ReviewPrecision): the share of examples decided automatically (not
// routed to review, with a model in force) and how often those were
// right against the file's labels, revealed or not.
type ReviewScores struct {
	TargetPrecision float64 `json:"target_precision"`
	// Decided is the share of the examples decided automatically;
	// Precision the share of those whose label was right (null when none
	// was decided). Over several seeds, Decided is their mean and
	// Precision is over every prediction decided in any of them.
	Decided   float64  `json:"decided"`
	Precision *float64 `json:"precision"`
	// Routed counts the predictions routed to review.
	Routed int `json:"routed"`
	// Classes holds the same counts for each class predicted, by name:
	// a class decided at a lower precision than the others shows there.
	// Over several seeds, they are the seeds' sums.
	Classes []ClassReview `json:"classes,omitempty"`
	// Curve is the coverage and precision of every cut of the
	// predictions' probabilities over the whole run, highest first: what
	// one threshold for all classes, chosen in hindsight, would have
	// decided. It is drawn beside the point the routing reached.
	Curve []CoveragePoint `json:"curve,omitempty"`
}

// ClassReview is the routing of the predictions of one class: how many
// were decided automatically, how many of those were right, and how many
// were routed to review.
type ClassReview struct {
	Class   string `json:"class"`
	Decided int    `json:"decided"`
	Right   int    `json:"right"`
	Routed  int    `json:"routed"`
}

// CoveragePoint is a share of the examples decided automatically and the
// precision reached on them.
type CoveragePoint struct {
	Coverage  float64 `json:"coverage"`
	Precision float64 `json:"precision"`
}

// reviewTally counts review routing over a run.
type reviewTally struct {
	examples, decided, right, routed int
	graded                           []gradedArrival
	classes                          map[string]*ClassReview
}

// gradedArrival is a prediction at arrival: its probability and whether
// the file's label agreed.
type gradedArrival struct {
	prob    float64
	correct bool
}

// add counts one labeled example's prediction of class ("" when no
// model was in force): routed to review or not, and right or not.
func (t *reviewTally) add(class string, review bool, prob float64, correct bool) {
	t.examples++
	if class == "" {
		return
	}
	t.graded = append(t.graded, gradedArrival{prob, correct})
	if t.classes == nil {
		t.classes = map[string]*ClassReview{}
	}
	c := classIn(t.classes, class)
	if review {
		t.routed++
		c.Routed++
		return
	}
	t.decided++
	c.Decided++
	if correct {
		t.right++
		c.Right++
	}
}

// coverageSteps is the number of points of a coverage curve.
const coverageSteps = 100

// scores returns the run's figures.
func (t *reviewTally) scores(target float64) ReviewScores {
	s := ReviewScores{TargetPrecision: target, Routed: t.routed, Classes: byName(t.classes)}
	if t.examples > 0 {
		s.Decided = float64(t.decided) / float64(t.examples)
	}
	if t.decided > 0 {
		p := float64(t.right) / float64(t.decided)
		s.Precision = &p
	}
	g := slices.Clone(t.graded)
	slices.SortStableFunc(g, func(a, b gradedArrival) int { return cmp.Compare(b.prob, a.prob) })
	right, next := 0, 1
	for i, a := range g {
		if a.correct {
			right++
		}
		if float64(i+1) >= float64(next)*float64(t.examples)/coverageSteps || i == len(g)-1 {
			s.Curve = append(s.Curve, CoveragePoint{Coverage: float64(i+1) / float64(t.examples), Precision: float64(right) / float64(i+1)})
			next++
		}
	}
	return s
}

// sumClasses adds up the runs' counts class by class, sorted by class.
func sumClasses(runs [][]ClassReview) []ClassReview {
	sums := map[string]*ClassReview{}
	for _, classes := range runs {
		for _, c := range classes {
			s := classIn(sums, c.Class)
			s.Decided, s.Right, s.Routed = s.Decided+c.Decided, s.Right+c.Right, s.Routed+c.Routed
		}
	}
	return byName(sums)
}

// classIn returns the counts of class in classes, added at zero when
// absent.
func classIn(classes map[string]*ClassReview, class string) *ClassReview {
	c := classes[class]
	if c == nil {
		c = &ClassReview{Class: class}
		classes[class] = c
	}
	return c
}

// byName returns the counts of classes sorted by class.
func byName(classes map[string]*ClassReview) []ClassReview {
	var out []ClassReview
	for _, c := range classes {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ClassReview) int { return cmp.Compare(a.Class, b.Class) })
	return out
}
