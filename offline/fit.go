package offline

import (
	"context"
	"fmt"
	"io"
	"time"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online/kernel"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/online/train"
	"streamer/snapshot"
	"streamer/vector"
)

// GraphConfig describes the kNN graph `fit` builds over a file's rows.
type GraphConfig struct {
	K         int
	Laplacian anngraph.LaplacianConfig
	// ExactBelow is the number of rows below which the kNN graph is exact
	// (brute force); above, the approximate graph of package anngraph.
	ExactBelow int
}

// FitConfig describes `streamer fit`.
type FitConfig struct {
	Name   string // the model's name in its snapshot; "" means "default"
	Data   string // LIBSVM/svmlight (optionally .gz, .bz2) or JSONL
	Labels string // optional SVMlin label file: 1, -1 or 0 per line
	// Features is the featurizer for JSONL files; LIBSVM files take their
	// dimension from the largest index.
	Features ingest.Featurizer
	// Examples says where a JSONL row's fields are (input.examples); nil
	// is the default schema.
	Examples *ingest.ExampleMapping
	// Unlabeled says which LIBSVM label marks an unlabeled row; the zero
	// value decides from the file's labels (ingest.UnlabeledAuto).
	Unlabeled ingest.UnlabeledLabel
	Params    train.Params
	Graph     GraphConfig
	// Kernel, when enabled, trains over a Nyström kernel map of the rows
	// (landmarks drawn from them); the kNN graph stays on the rows.
	Kernel kernel.Config
	// BadLines, when set, is told which records were rejected: file, line
	// and reason, up to MaxBadLines.
	BadLines io.Writer
	// Warnings, when set, is told of what the data suggests was meant
	// otherwise (minusOneHint).
	Warnings io.Writer
}

// FitReport is the line `streamer fit` prints.
type FitReport struct {
	Algorithm   string   `json:"algo"`
	Rows        int      `json:"rows"`
	Labeled     int      `json:"labeled"`
	Classes     []string `json:"classes"`
	Features    int      `json:"features"`
	Objective   float64  `json:"objective"`
	NewtonSteps int      `json:"newton_steps"`
	CGLSIters   int      `json:"cgls_iters"`
	Switches    int      `json:"switches,omitempty"`
	// Seconds is the whole fit; SolveSeconds the training alone, without
	// reading the data or building the graph.
	Seconds      float64 `json:"seconds"`
	SolveSeconds float64 `json:"solve_seconds"`
	// SolveCPUSeconds is the CPU time (user and system, all threads) the
	// training took: on a loaded machine it moves less than the wall time.
	SolveCPUSeconds float64 `json:"solve_cpu_seconds"`
	BadRecords      int     `json:"bad_records"`
	// Accuracy is the transductive accuracy on the rows whose label the
	// fit did not see (0 when none has one).
	Accuracy float64 `json:"transductive_accuracy,omitempty"`
}

// Fit is a trained model with what it was trained on.
type Fit struct {
	Model    *model.Model
	Snapshot *snapshot.Snapshot
	// Predictions holds the predicted class of every training row, in
	// input order.
	Predictions []string
	Report      FitReport
}

// dataset is a file read into memory.
type dataset struct {
	ids    []string
	rows   []vector.Vector
	labels []string // "" for unlabeled
	truth  []string // the label in the file, even when --labels hides it
	dim    int
	bad    int
}

// RunFit trains a model on cfg.Data.
func RunFit(ctx context.Context, cfg FitConfig) (*Fit, error) {
	start := time.Now()
	cfg.Graph.Laplacian.Degree = train.GraphDegree(cfg.Params.Algorithm, cfg.Graph.Laplacian.Degree)
	data, err := readDataset(cfg.Data, &ingest.Decoder{Featurizer: cfg.Features, Unlabeled: cfg.Unlabeled, Examples: cfg.Examples}, cfg.BadLines)
	if err != nil {
		return nil, err
	}
	if cfg.Labels != "" {
		if err := applyLabelsFile(data, cfg.Labels); err != nil {
			return nil, err
		}
	}
	if hint := minusOneHint(cfg, data.labels); hint != "" && cfg.Warnings != nil {
		fmt.Fprintln(cfg.Warnings, hint)
	}
	lap, err := buildGraph(data, cfg)
	if err != nil {
		return nil, err
	}
	km, err := fitKernelMap(data, cfg.Kernel)
	if err != nil {
		return nil, err
	}
	window := train.Window{X: linalg.NewMatrix(data.rows, data.dim), Labels: data.labels}
	if km != nil {
		rows, err := km.ApplyAll(ctx, data.rows)
		if err != nil {
			return nil, fmt.Errorf("kernel map: %w", err)
		}
		window.X = linalg.NewMatrix(rows, km.Dim())
	}
	if lap != nil {
		window.Laplacian, window.Graph = lap, lap
	}
	cpu := processCPU()
	m, st, err := train.Solve(ctx, window, cfg.Params, nil)
	cpu = processCPU() - cpu
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	m.Map = km
	m.Pack()
	fit := &Fit{Model: m, Predictions: make([]string, len(data.rows))}
	ok, held := 0, 0
	for i, v := range data.rows {
		fit.Predictions[i] = m.Classes[m.Predict(v).Class]
		if data.labels[i] == "" && data.truth[i] != "" {
			held++
			if fit.Predictions[i] == data.truth[i] {
				ok++
			}
		}
	}
	fit.Report = FitReport{
		Algorithm: string(st.Algorithm), Rows: len(data.rows), Labeled: st.Labeled, Classes: m.Classes,
		Features: data.dim, Objective: st.Objective, NewtonSteps: st.NewtonSteps, CGLSIters: st.CGLSIters,
		Switches: st.Switches, BadRecords: data.bad, Seconds: time.Since(start).Seconds(),
		SolveSeconds: st.Seconds, SolveCPUSeconds: cpu.Seconds(),
	}
	if held > 0 {
		fit.Report.Accuracy = float64(ok) / float64(held)
	}
	fit.Snapshot = fitSnapshot(m, cfg, data.dim, snapshot.Stats{Examples: int64(len(data.rows)), Labels: int64(st.Labeled), Solves: 1, WindowSize: len(data.rows), Labeled: st.Labeled, Objective: st.Objective})
	return fit, nil
}

// fitKernelMap returns the kernel map of cfg over landmarks drawn from the
// rows, or nil without a kernel.
func fitKernelMap(d *dataset, cfg kernel.Config) (*kernel.Map, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	km, err := kernel.NewMap(kernel.SampleLandmarks(d.rows, cfg.LandmarkCount(), 1), cfg.Gamma)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	return km, nil
}

// readDataset reads every record of path; bad records are counted.
func readDataset(path string, dec *ingest.Decoder, badLines io.Writer) (*dataset, error) {
	libsvm := !ingest.IsJSONLines(path)
	if libsvm {
		dec.Featurizer.Dim = 1 << 31 // the model's dimension is the largest index seen
	}
	d := &dataset{dim: dec.Featurizer.Dim}
	if d.dim == 0 {
		d.dim = ingest.DefaultDim
	}
	if libsvm {
		d.dim = 0
	}
	bad, err := eachRecordNamingBad(path, dec, badLines, func(rec ingest.Record) error {
		d.add(rec, libsvm)
		return nil
	})
	d.bad = bad
	if err != nil {
		return nil, err
	}
	if len(d.rows) == 0 {
		return nil, fmt.Errorf("fit: no usable record in %s", path)
	}
	return d, nil
}

func (d *dataset) add(rec ingest.Record, libsvm bool) {
	v := rec.Vector
	d.ids = append(d.ids, rec.ID)
	d.rows = append(d.rows, v)
	label := ""
	if rec.Labeled {
		label = rec.Label
	}
	d.labels = append(d.labels, label)
	d.truth = append(d.truth, label)
	switch {
	case v.IsDense():
		d.dim = max(d.dim, len(v.Values))
	case libsvm && len(v.Indices) > 0:
		d.dim = max(d.dim, int(v.Indices[len(v.Indices)-1])+1)
	}
}

// applyLabelsFile replaces the labels by those of an SVMlin label file: 1
// and -1 are the classes "1" and "-1", 0 unlabeled.
func applyLabelsFile(d *dataset, path string) error {
	ls, err := ingest.ReadLabelsFile(path)
	if err != nil {
		return err
	}
	if len(ls) != len(d.rows) {
		return fmt.Errorf("labels file %s has %d lines for %d rows", path, len(ls), len(d.rows))
	}
	for i, l := range ls {
		switch l {
		case 0:
			d.labels[i] = ""
		default:
			d.labels[i] = fmt.Sprint(l)
			d.truth[i] = d.labels[i]
		}
	}
	return nil
}

// buildGraph builds the Laplacian over the rows when the objective needs
// one: exact kNN for few rows, the approximate graph of anngraph beyond.
func buildGraph(d *dataset, cfg FitConfig) (*anngraph.Laplacian, error) {
	algo := cfg.Params.Algorithm
	grows := algo.GrowsGraph() && train.ClassCount(d.labels) >= 3
	if !algo.UsesGraph(cfg.Params.LambdaI) && !grows {
		return nil, nil
	}
	metric := anngraph.Cosine
	if d.rows[0].IsDense() {
		metric = anngraph.Euclidean
	}
	exactBelow := cfg.Graph.ExactBelow
	if exactBelow == 0 {
		exactBelow = 3000
	}
	view, err := anngraph.Build(d.rows, anngraph.Config{
		MaxExamples: len(d.rows), K: cfg.Graph.K, Metric: metric, Exhaustive: len(d.rows) < exactBelow, Seed: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("kNN graph: %w", err)
	}
	lap, err := view.Laplacian(cfg.Graph.Laplacian)
	if err != nil {
		return nil, fmt.Errorf("graph Laplacian: %w", err)
	}
	return lap, nil
}

// fitSnapshot wraps a fitted model as a snapshot, the model file format.
func fitSnapshot(m *model.Model, cfg FitConfig, dim int, stats snapshot.Stats) *snapshot.Snapshot {
	kept := *m
	kept.Problems = make([]model.Solution, len(m.Problems))
	for k, p := range m.Problems {
		kept.Problems[k] = model.Solution{W: p.W, Temperature: p.Temperature}
	}
	f := cfg.Features
	name := cfg.Name
	if name == "" {
		name = "default"
	}
	return &snapshot.Snapshot{
		Name: name, Version: 1, CreatedAt: time.Now().UTC(),
		Features: snapshot.Features{Dim: dim, DenseDim: f.DenseDim, Signed: f.Signed, Normalize: f.Normalize},
		Params:   snapshotParams(cfg.Params),
		Window: snapshot.Window{K: cfg.Graph.K, Degree: cfg.Graph.Laplacian.Degree, Weights: cfg.Graph.Laplacian.Weights.String(),
			Laplacian: laplacianName(cfg.Graph.Laplacian.Normalized)},
		Model: kept,
		Stats: stats,
	}
}

// snapshotParams returns the solver's hyper-parameters as a snapshot keeps
// them.
func snapshotParams(p train.Params) snapshot.Params {
	return snapshot.Params{
		Algorithm: string(p.Algorithm), Lambda: p.Lambda, LambdaU: p.LambdaU, LambdaI: p.LambdaI,
		R: p.R, MaxSwitch: p.MaxSwitch, PositiveCost: p.PositiveCost, NegativeCost: p.NegativeCost,
		SRDelta: p.Spectral.Delta, SRGamma: p.Spectral.Gamma, SRNeighbours: p.Spectral.Neighbours,
	}
}

func laplacianName(normalized bool) string {
	if normalized {
		return "normalized"
	}
	return "unnormalized"
}

// minusOneHint returns a warning when a LIBSVM file read with the automatic
// rule looks like scikit-learn's semi-supervised convention: -1 is the most
// frequent of three classes or more, where it most likely marks the
// unlabeled rows; "" otherwise.
func minusOneHint(cfg FitConfig, labels []string) string {
	if ingest.IsJSONLines(cfg.Data) || cfg.Labels != "" || cfg.Unlabeled.Rule != ingest.UnlabeledAuto {
		return ""
	}
	count := map[string]int{}
	most := ""
	for _, l := range labels {
		if l == "" {
			continue
		}
		count[l]++
		if count[l] > count[most] {
			most = l
		}
	}
	if most != "-1" || len(count) < 3 {
		return ""
	}
	return fmt.Sprintf("fit: label -1, on %d of %d rows, is taken as a class; if it marks unlabeled rows (scikit-learn's convention), pass --unlabeled-label -1", count[most], len(labels))
}
