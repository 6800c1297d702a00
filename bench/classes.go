package bench

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"streamer/anngraph"
	"streamer/online"
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
	Seed        uint64
	Params      online.Params
}

// ClassesReport is what the multi-class bench prints. Graph building
// is timed apart from the solves.
type ClassesReport struct {
	Algorithm      online.Algorithm `json:"algo"`
	Rows           int              `json:"rows"`
	Classes        int              `json:"classes"`
	Labeled        int              `json:"labeled"`
	GraphSeconds   float64          `json:"graph_seconds"`
	ColdSeconds    float64          `json:"cold_seconds"`
	SVMColdSeconds float64          `json:"svm_cold_seconds"`
	ColdOverSVM    float64          `json:"cold_over_svm"`
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
	rep := ClassesReport{Algorithm: cmp.Or(cfg.Params.Algorithm, online.DefaultAlgorithm), Rows: cfg.Rows, Classes: cfg.Classes}
	cold, err := classBenchWindow(cfg, rows, labels, 0, &rep.GraphSeconds)
	if err != nil {
		return rep, err
	}
	rep.Labeled = labeledCount(cold.Labels)
	m, st, err := online.Train(ctx, cold, cfg.Params, nil)
	if err != nil {
		return rep, fmt.Errorf("cold solve: %w", err)
	}
	rep.ColdSeconds, rep.EigenIters, rep.CGLSIters = st.Seconds, st.EigenIters, st.CGLSIters
	rep.UnlabeledAccuracy = benchAccuracy(m, rows[:cfg.Rows], labels, truth)
	svm := cfg.Params
	svm.Algorithm, svm.LambdaU, svm.LambdaI = online.SVM, 0, 0
	sm, sst, err := online.Train(ctx, cold, svm, nil)
	if err != nil {
		return rep, fmt.Errorf("svm solve: %w", err)
	}
	rep.SVMColdSeconds, rep.SVMAccuracy = sst.Seconds, benchAccuracy(sm, rows[:cfg.Rows], labels, truth)
	rep.ColdOverSVM = rep.ColdSeconds / rep.SVMColdSeconds
	full := cold
	full.Labels = truth[:cfg.Rows]
	_, fst, err := online.Train(ctx, full, svm, nil)
	if err != nil {
		return rep, fmt.Errorf("svm solve with every label: %w", err)
	}
	rep.AllLabeledSVMSeconds = fst.Seconds
	rep.ColdOverAllLabeled = rep.ColdSeconds / fst.Seconds
	var graphAgain float64
	next, err := classBenchWindow(cfg, rows, labels, replaced, &graphAgain)
	if err != nil {
		return rep, err
	}
	_, wst, err := online.Train(ctx, next, cfg.Params, m)
	if err != nil {
		return rep, fmt.Errorf("warm solve: %w", err)
	}
	rep.WarmSeconds, rep.WarmEigenIters, rep.WarmCGLSIters = wst.Seconds, wst.EigenIters, wst.CGLSIters
	rep.WarmOverCold = rep.WarmSeconds / rep.ColdSeconds
	return rep, nil
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
// graphSeconds).
func classBenchWindow(cfg ClassesConfig, rows []vector.Vector, labels []string, first int, graphSeconds *float64) (online.TrainData, error) {
	win := rows[first : first+cfg.Rows]
	keys := make([]uint64, cfg.Rows)
	for i := range keys {
		keys[i] = uint64(first + i)
	}
	data := online.TrainData{X: online.NewMatrix(win, cfg.Dim), Labels: labels[first : first+cfg.Rows], Keys: keys, Rows: win}
	algo := cmp.Or(cfg.Params.Algorithm, online.DefaultAlgorithm)
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
	lap, err := view.Laplacian(anngraph.LaplacianConfig{Normalized: true})
	if err != nil {
		return data, fmt.Errorf("graph: %w", err)
	}
	data.Laplacian, data.Graph = lap, lap
	*graphSeconds += time.Since(start).Seconds()
	return data, nil
}

func benchAccuracy(m *online.Model, rows []vector.Vector, labels, truth []string) float64 {
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
