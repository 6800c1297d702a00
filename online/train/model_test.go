package train

import (
	"context"
	"math"
	"testing"

	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/synth"
	"streamer/vector"
)

// clusters returns points of 3 well separated Gaussian clusters, labeled
// with their cluster name for the first `labeled` points.
func threeClusters(n, labeled int) ([]vector.Vector, []string, []string) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: n, Dim: 10, Clusters: 3, Spread: 0.2, Seed: 9})
	names := []string{"red", "green", "blue"}
	truth := make([]string, n)
	labels := make([]string, n)
	for i, c := range cs {
		truth[i] = names[c]
		if i < labeled {
			labels[i] = names[c]
		}
	}
	return xs, labels, truth
}

func accuracy(m *model.Model, xs []vector.Vector, truth []string) float64 {
	ok := 0
	for i, x := range xs {
		if m.Classes[m.Predict(x).Class] == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(xs))
}

func TestTrainOneVersusRest(t *testing.T) {
	xs, labels, truth := threeClusters(300, 30)
	for _, a := range []Algorithm{RLS, SVM, TSVM, DA} {
		m, st, err := Solve(context.Background(), Window{X: linalg.NewVectorRows(xs, 10, 1), Labels: labels}, Params{Algorithm: a, Lambda: 0.1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Classes) != 3 || st.Problems != 3 || st.Labeled != 30 {
			t.Fatalf("%s: classes %v, stats %+v", a, m.Classes, st)
		}
		if acc := accuracy(m, xs, truth); acc < 0.95 {
			t.Errorf("%s: accuracy %.3f", a, acc)
		}
	}
}

func TestTrainNeedsTwoClasses(t *testing.T) {
	xs, _, _ := threeClusters(20, 0)
	labels := make([]string, 20)
	labels[0], labels[1] = "a", "a"
	_, _, err := Solve(context.Background(), Window{X: linalg.NewVectorRows(xs, 10, 1), Labels: labels}, Params{}, nil)
	if err != ErrOneClass {
		t.Fatalf("err = %v, want ErrOneClass", err)
	}
}

// TestClassAppearsLater grows a binary model into a three-class one: the
// old classes keep their positions and the warm start carries over.
func TestClassAppearsLater(t *testing.T) {
	xs, labels, truth := threeClusters(300, 60)
	early := make([]string, len(labels))
	for i, l := range labels {
		if l != "blue" {
			early[i] = l
		}
	}
	x := linalg.NewVectorRows(xs, 10, 1)
	params := Params{Algorithm: TSVM, Lambda: 0.1}
	binary, _, err := Solve(context.Background(), Window{X: x, Labels: early}, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !binary.Binary() || len(binary.Problems) != 1 {
		t.Fatalf("model with classes %v has %d problems", binary.Classes, len(binary.Problems))
	}
	grown, _, err := Solve(context.Background(), Window{X: x, Labels: labels}, params, binary)
	if err != nil {
		t.Fatal(err)
	}
	if len(grown.Classes) != 3 || grown.Classes[0] != binary.Classes[0] || grown.Classes[1] != binary.Classes[1] || grown.Classes[2] != "blue" {
		t.Fatalf("classes %v grew from %v", grown.Classes, binary.Classes)
	}
	if acc := accuracy(grown, xs, truth); acc < 0.95 {
		t.Fatalf("accuracy %.3f", acc)
	}
}

func TestBinaryScoresAreMirrored(t *testing.T) {
	xs, ys := onlinetest.RandomProblem(5, 80, 4, 30)
	labels := make([]string, len(ys))
	for i, y := range ys {
		switch y {
		case 1:
			labels[i] = "spam"
		case -1:
			labels[i] = "ham"
		}
	}
	m, _, err := Solve(context.Background(), Window{X: linalg.NewVectorRows(xs, 4, 1), Labels: labels}, Params{Algorithm: SVM}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		s := m.Scores(x, nil)
		if s[0] != -s[1] {
			t.Fatalf("scores %v", s)
		}
		p := m.Predict(x)
		if p.Prob < 0.5 || p.Prob > 1 {
			t.Fatalf("probability of the predicted class %v", p.Prob)
		}
	}
}

// TestBinaryPositiveClass checks that R and the class costs speak of the
// class "1" whichever of 1 and -1 the data shows first.
func TestBinaryPositiveClass(t *testing.T) {
	xs, ys := synth.Gaussians(6, 400, 5, 1)
	for _, first := range []string{"1", "-1"} {
		labels := make([]string, len(xs))
		labels[0] = first
		for i := 1; i < 40; i++ {
			labels[i] = "1"
			if ys[i] < 0 {
				labels[i] = "-1"
			}
		}
		m, _, err := Solve(context.Background(), Window{X: linalg.NewVectorRows(xs, 5, 1), Labels: labels},
			Params{Algorithm: TSVM, Lambda: 0.1, R: 0.3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The TSVM labels say +1 for the problem's positive class, Classes[1].
		ones := 0
		for _, y := range m.Problems[0].Unlabeled {
			if (y > 0) == (m.Classes[1] == "1") {
				ones++
			}
		}
		u := len(m.Problems[0].Unlabeled)
		if want := int(math.Round(0.3 * float64(u))); ones != want {
			t.Errorf("data starting with %q: %d unlabeled rows are 1, want %d (R = 0.3)", first, ones, want)
		}
	}
}

// chosenWindow returns a window whose unlabeled rows are four-fifths
// positive, labeled by 40 rows chosen half from each class (as requests
// near the boundary come) and 40 drawn as the stream came, and every
// row's true class.
func chosenWindow() (Window, []string) {
	all, ys := synth.Gaussians(12, 2000, 5, 1.5)
	var xs []vector.Vector
	var truth []string
	for i, x := range all {
		if ys[i] < 0 && i%4 != 0 {
			continue // a quarter of the negatives stay: 80% positive
		}
		xs = append(xs, x)
		truth = append(truth, map[bool]string{true: "pos", false: "neg"}[ys[i] > 0])
	}
	w := Window{X: linalg.NewVectorRows(xs, 5, 1), Rows: xs, Labels: make([]string, len(xs)), Chosen: make([]bool, len(xs))}
	var drawn, pos, neg int
	for i := range xs {
		switch {
		case drawn < 40:
			w.Labels[i], drawn = truth[i], drawn+1
		case truth[i] == "pos" && pos < 20:
			w.Labels[i], w.Chosen[i], pos = truth[i], true, pos+1
		case truth[i] == "neg" && neg < 20:
			w.Labels[i], w.Chosen[i], neg = truth[i], true, neg+1
		}
	}
	return w, truth
}

func TestUnlabeledSharesComeFromASupervisedFit(t *testing.T) {
	w, truth := chosenWindow()
	var unlabeled, positive, labeled, labeledPositive float64
	for i, l := range w.Labels {
		switch {
		case l == "":
			unlabeled++
			if truth[i] == "pos" {
				positive++
			}
		default:
			labeled++
			if l == "pos" {
				labeledPositive++
			}
		}
	}
	want, ofLabels := positive/unlabeled, labeledPositive/labeled
	ctx := context.Background()
	shares, err := unlabeledShares(ctx, w, Params{Lambda: 0.1}, []string{"pos", "neg"}, int(labeled))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("share of positives among the unlabeled rows %.3f, among the labels %.3f, estimated %.3f", want, ofLabels, shares["pos"])
	if math.Abs(shares["pos"]-want) >= math.Abs(ofLabels-want)/2 || math.Abs(shares["pos"]+shares["neg"]-1) > 1e-9 {
		t.Fatalf("shares %v; the unlabeled rows hold %.3f positive, the labels %.3f", shares, want, ofLabels)
	}
	w.Chosen = nil
	if shares, err := unlabeledShares(ctx, w, Params{Lambda: 0.1}, []string{"pos", "neg"}, int(labeled)); shares != nil || err != nil {
		t.Fatalf("no label chosen: shares %v, %v; want none (the labels' own share holds)", shares, err)
	}
}

// TestChosenLabelsDoNotSetTheUnlabeledShare: told which labels were
// chosen, TSVM holds a share of positives nearer the truth and errs less
// on the unlabeled rows.
func TestChosenLabelsDoNotSetTheUnlabeledShare(t *testing.T) {
	w, truth := chosenWindow()
	solve := func(chosen []bool) (share, acc float64) {
		w.Chosen = chosen
		m, _, err := Solve(context.Background(), w, Params{Algorithm: TSVM, Lambda: 0.1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var unlabeled, positive, right float64
		for i, v := range w.Rows {
			if w.Labels[i] != "" {
				continue
			}
			c := m.Classes[m.Predict(v).Class]
			unlabeled++
			if c == "pos" {
				positive++
			}
			if c == truth[i] {
				right++
			}
		}
		return positive / unlabeled, right / unlabeled
	}
	chosen := w.Chosen
	shareAll, accAll := solve(nil)
	shareDrawn, accDrawn := solve(chosen)
	t.Logf("unlabeled predicted positive: %.3f from the labels' share, %.3f told which were chosen (accuracy %.3f, %.3f)", shareAll, shareDrawn, accAll, accDrawn)
	if math.Abs(shareDrawn-0.8) >= math.Abs(shareAll-0.8) || accDrawn <= accAll {
		t.Fatalf("told which labels were chosen: share %.3f, accuracy %.3f; from the labels' share: %.3f, accuracy %.3f",
			shareDrawn, accDrawn, shareAll, accAll)
	}
}
