package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"streamer/anngraph"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/online/train"
	"streamer/synth"
	"streamer/vector"
)

// ClassesConfig describes `streamer bench solve --classes C`: a
// generated multi-class window, solved cold by the algorithm, by a
// supervised svm on the same rows and labels, and by one with every label
// revealed, then re-solved warm after a fraction of its rows is replaced.
type ClassesConfig struct {
	Rows        int
	Classes     int
	Dense       bool    // dense clustered rows of Dim values; else sparse text-like rows
	Dim         int     // dense dimension, or the sparse feature space
	NNZ         int     // mean non-zeros of a sparse row
	LabeledFrac float64 // fraction of rows whose label is revealed
	ReplaceFrac float64 // rows replaced before the warm re-solve; 0 means 0.01
	K           int     // neighbours of the kNN graph; 0 means 10
	Degree      int     // p of the Laplacian's power M = L^p; 0 means online.GraphDegree's choice
	Seed        uint64
	// Repeats is how many times each of the four solves runs, in turn;
	// the report gives each one's median seconds. 0 means 1.
	Repeats int
	Params  train.Params
}

// ClassesReport is what the multi-class bench prints. Graph building
// is timed apart from the solves.
type ClassesReport struct {
	Algorithm      train.Algorithm `json:"algo"`
	Rows           int             `json:"rows"`
	Classes        int             `json:"classes"`
	Labeled        int             `json:"labeled"`
	Repeats        int             `json:"repeats"`
	GraphSeconds   float64         `json:"graph_seconds"`
	ColdSeconds    float64         `json:"cold_seconds"`
	SVMColdSeconds float64         `json:"svm_cold_seconds"`
	ColdOverSVM    float64         `json:"cold_over_svm"`
	// AllLabeledSVMSeconds is a cold supervised svm on the same rows with
	// every label revealed: the cost of learning from the whole window
	// when labels are not scarce.
	AllLabeledSVMSeconds float64 `json:"all_labeled_svm_seconds"`
	ColdOverAllLabeled   float64 `json:"cold_over_all_labeled_svm"`
	WarmSeconds          float64 `json:"warm_seconds"`
	WarmOverCold         float64 `json:"warm_over_cold"`
	EigenIters           int     `json:"eigen_iters"`
	WarmEigenIters       int     `json:"warm_eigen_iters"`
	CGLSIters            int     `json:"cgls_iters"`
	WarmCGLSIters        int     `json:"warm_cgls_iters"`
	UnlabeledAccuracy    float64 `json:"unlabeled_accuracy"`
	SVMAccuracy          float64 `json:"svm_unlabeled_accuracy"`
}

// Classes runs the multi-class bench of cfg.
func Classes(ctx context.Context, cfg ClassesConfig) (ClassesReport, error) {
	if cfg.Rows <= 0 || cfg.Classes < 2 || cfg.Dim <= 0 || cfg.LabeledFrac <= 0 {
		return ClassesReport{}, fmt.Errorf("bench needs positive rows, dim and labeled fraction and two classes or more: %+v", cfg)
	}
	replaced := max(1, int(float64(cfg.Rows)*cmp.Or(cfg.ReplaceFrac, 0.01)))
	rows, truth := classBenchRows(cfg, cfg.Rows+replaced)
	labels := make([]string, len(truth))
	for i, y := range revealLabels(onesLike(truth), cfg.LabeledFrac, cfg.Seed) {
		if y != 0 {
			labels[i] = truth[i]
		}
	}
	rep := ClassesReport{Algorithm: cmp.Or(cfg.Params.Algorithm, train.DefaultAlgorithm), Rows: cfg.Rows, Classes: cfg.Classes, Repeats: max(1, cfg.Repeats)}
	cold, err := classBenchWindow(cfg, rows, labels, 0, &rep.GraphSeconds)
	if err != nil {
		return rep, err
	}
	var graphAgain float64
	next, err := classBenchWindow(cfg, rows, labels, replaced, &graphAgain)
	if err != nil {
		return rep, err
	}
	rep.Labeled = labeledCount(cold.Labels)
	b := classesBench{cfg: cfg, cold: cold, next: next, truth: truth}
	var seconds [4][]float64 // cold, svm, svm with every label, warm
	for r := range rep.Repeats {
		t, err := b.round(ctx, &rep, r == 0)
		if err != nil {
			return rep, err
		}
		for k := range t {
			seconds[k] = append(seconds[k], t[k])
		}
	}
	rep.ColdSeconds, rep.SVMColdSeconds = median(seconds[0]), median(seconds[1])
	rep.AllLabeledSVMSeconds, rep.WarmSeconds = median(seconds[2]), median(seconds[3])
	rep.ColdOverSVM = rep.ColdSeconds / rep.SVMColdSeconds
	rep.ColdOverAllLabeled = rep.ColdSeconds / rep.AllLabeledSVMSeconds
	rep.WarmOverCold = rep.WarmSeconds / rep.ColdSeconds
	return rep, nil
}

// classesBench holds the windows of a multi-class bench: cold, and next
// after the rows were replaced.
type classesBench struct {
	cfg        ClassesConfig
	cold, next train.Window
	truth      []string
}

// round runs the four solves once and returns their seconds; the first
// round also fills in rep's iterations and accuracies (the solves are
// deterministic, so every round has the same).
func (b classesBench) round(ctx context.Context, rep *ClassesReport, first bool) ([4]float64, error) {
	var t [4]float64
	m, st, err := train.Solve(ctx, b.cold, b.cfg.Params, nil)
	if err != nil {
		return t, fmt.Errorf("cold solve: %w", err)
	}
	t[0] = st.Seconds
	svm := b.cfg.Params
	svm.Algorithm, svm.LambdaU, svm.LambdaI = train.SVM, 0, 0
	sm, sst, err := train.Solve(ctx, b.cold, svm, nil)
	if err != nil {
		return t, fmt.Errorf("svm solve: %w", err)
	}
	t[1] = sst.Seconds
	full := b.cold
	full.Labels = b.truth[:b.cfg.Rows]
	_, fst, err := train.Solve(ctx, full, svm, nil)
	if err != nil {
		return t, fmt.Errorf("svm solve with every label: %w", err)
	}
	t[2] = fst.Seconds
	_, wst, err := train.Solve(ctx, b.next, b.cfg.Params, m)
	if err != nil {
		return t, fmt.Errorf("warm solve: %w", err)
	}
	t[3] = wst.Seconds
	if first {
		rep.EigenIters, rep.CGLSIters = st.EigenIters, st.CGLSIters
		rep.WarmEigenIters, rep.WarmCGLSIters = wst.EigenIters, wst.CGLSIters
		rows := b.cold.Rows
		rep.UnlabeledAccuracy = benchAccuracy(m, rows, b.cold.Labels, b.truth)
		rep.SVMAccuracy = benchAccuracy(sm, rows, b.cold.Labels, b.truth)
	}
	return t, nil
}

// median returns the median of xs (the mean of the middle two for an
// even count), leaving xs as it was.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// classBenchRows draws n rows and their classes: dense Gaussian clusters
// (three per class), or sparse text-like rows whose topics (two per class)
// give the class.
func classBenchRows(cfg ClassesConfig, n int) ([]vector.Vector, []string) {
	truth := make([]string, n)
	if cfg.Dense {
		xs, cs := synth.Clusters(synth.ClusterConfig{Points: n, Dim: cfg.Dim, Clusters: 3 * cfg.Classes, Spread: 0.8, Seed: cfg.Seed})
		for i, c := range cs {
			truth[i] = fmt.Sprint(c % cfg.Classes)
		}
		return xs, truth
	}
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: n, Dim: cfg.Dim, NNZ: cfg.NNZ, Topics: 2 * cfg.Classes, Seed: cfg.Seed})
	for i, t := range text.Topics {
		truth[i] = fmt.Sprint(t % cfg.Classes)
	}
	return text.Rows, truth
}

// classBenchWindow returns the window of cfg.Rows rows starting at first,
// with its kNN graph when the algorithm needs one (its build time added to
// graphSeconds) and the Laplacian of cfg.Degree.
func classBenchWindow(cfg ClassesConfig, rows []vector.Vector, labels []string, first int, graphSeconds *float64) (train.Window, error) {
	win := rows[first : first+cfg.Rows]
	keys := make([]uint64, cfg.Rows)
	for i := range keys {
		keys[i] = uint64(first + i)
	}
	data := train.Window{X: linalg.NewMatrix(win, cfg.Dim), Labels: labels[first : first+cfg.Rows], Keys: keys, Rows: win}
	algo := cmp.Or(cfg.Params.Algorithm, train.DefaultAlgorithm)
	if !algo.UsesGraph(cfg.Params.LambdaI) && !algo.GrowsGraph() {
		return data, nil
	}
	start := time.Now()
	metric := anngraph.Cosine
	if cfg.Dense {
		metric = anngraph.Euclidean
	}
	view, err := anngraph.Build(win, anngraph.Config{MaxExamples: cfg.Rows, K: cmp.Or(cfg.K, 10), Metric: metric, Exhaustive: cfg.Rows < 3000, Seed: 1})
	if err != nil {
		return data, fmt.Errorf("kNN graph: %w", err)
	}
	lap, err := view.Laplacian(anngraph.LaplacianConfig{Normalized: true, Degree: train.GraphDegree(algo, cfg.Degree)})
	if err != nil {
		return data, fmt.Errorf("graph: %w", err)
	}
	data.Laplacian, data.Graph = lap, lap
	*graphSeconds += time.Since(start).Seconds()
	return data, nil
}

func benchAccuracy(m *model.Model, rows []vector.Vector, labels, truth []string) float64 {
	ok, n := 0, 0
	for i, x := range rows {
		if labels[i] != "" {
			continue
		}
		n++
		if m.Classes[m.Predict(x).Class] == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(max(n, 1))
}

func onesLike(s []string) []float64 {
	out := make([]float64, len(s))
	for i := range out {
		out[i] = 1
	}
	return out
}

// labeledCount returns the number of labeled rows.
func labeledCount(labels []string) int {
	n := 0
	for _, l := range labels {
		if l != "" {
			n++
		}
	}
	return n
}
