package offline

import (
	"streamer/pipeline"
	"streamer/snapshot"
)

// arrivals scores every example's prediction at arrival against the label
// its file carries, revealed or not (MATH.md, streaming evaluation: a
// recorded file knows every label), with a curve point every step
// examples.
type arrivals struct {
	step    int
	total   pipeline.Score
	recent  pipeline.Score // since the last curve point
	noModel int
	curve   []snapshot.CurvePoint
	last    int // examples at the last curve point
	// length is the stream's, in records; tenths score each tenth of it.
	length int
	tenths [10]tenthCount
}

// tenthCount is what arrivals counts of one tenth of the stream.
type tenthCount struct {
	last, right, total, noModel int
}

// newArrivals returns an empty score with a curve point every step
// examples (0 means 100), of a stream of length records (0 when unknown:
// no tenths).
func newArrivals(step, length int) *arrivals {
	if step <= 0 {
		step = 100
	}
	return &arrivals{step: step, length: length, total: pipeline.NewScore(), recent: pipeline.NewScore()}
}

// add scores pred ("" before any model: wrong) against truth, the label of
// the examples-th example.
func (a *arrivals) add(pred, truth string, examples int) {
	if pred == "" {
		a.noModel++
	}
	a.total.Add(pred, truth)
	a.recent.Add(pred, truth)
	if a.length > 0 {
		t := &a.tenths[min(9, (examples-1)*10/a.length)]
		t.last, t.total = examples, t.total+1
		if pred == "" {
			t.noModel++
		} else if pred == truth {
			t.right++
		}
	}
	if examples-a.last >= a.step {
		a.point(examples)
	}
}

func (a *arrivals) point(examples int) {
	a.curve = append(a.curve, snapshot.CurvePoint{
		Labels: a.total.Total, Examples: examples,
		Accuracy: a.total.Accuracy(), RecentAccuracy: a.recent.Accuracy(),
	})
	a.recent, a.last = pipeline.NewScore(), examples
}

// fill writes the all-examples figures into s and ends the curve at the
// stream's last example.
func (a *arrivals) fill(s *Scores, examples int) {
	if examples > a.last && a.recent.Total > 0 {
		a.point(examples)
	}
	s.AllAccuracy, s.AllMacroF1 = a.total.Accuracy(), a.total.MacroF1()
}
