package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"streamer/online/linalg"
	"streamer/online/newton"
	"streamer/online/train"
	"streamer/synth"
	"streamer/vector"
)

// SolveConfig describes `streamer bench solve`: a generated text-like
// problem, solved cold and then re-solved warm after a fraction of its rows
// is replaced, as a sliding window does.
type SolveConfig struct {
	Rows        int     // rows in the window
	Features    int     // feature space size
	NNZ         int     // mean non-zeros per row
	LabeledFrac float64 // fraction of rows whose label is revealed
	Noise       float64 // label noise of the planted separator
	ReplaceFrac float64 // fraction of rows replaced before the warm re-solve; 0 means 0.01
	Seed        uint64
	// Repeats is how many times the cold and the warm solve run, in turn;
	// the report gives their median seconds. 0 means 1.
	Repeats int
	Params  train.Params
}

// SolveReport is what `streamer bench solve` prints.
type SolveReport struct {
	Algorithm     train.Algorithm `json:"algo"`
	Rows          int             `json:"rows"`
	Features      int             `json:"features"`
	NNZ           int             `json:"nnz"`
	Labeled       int             `json:"labeled"`
	Repeats       int             `json:"repeats"`
	ColdSeconds   float64         `json:"cold_seconds"`
	WarmSeconds   float64         `json:"warm_seconds"`
	Objective     float64         `json:"objective"`
	WarmObjective float64         `json:"warm_objective"`
	NewtonSteps   int             `json:"newton_steps"`
	CGLSIters     int             `json:"cgls_iters"`
	WarmNewton    int             `json:"warm_newton_steps"`
	WarmCGLS      int             `json:"warm_cgls_iters"`
	RowsPerSecond float64         `json:"rows_per_second"`
	// UnlabeledAccuracy is the accuracy on the unlabeled rows against the
	// planted labels, after the cold solve.
	UnlabeledAccuracy float64 `json:"unlabeled_accuracy"`
	GenerateSeconds   float64 `json:"generate_seconds"`
}

// Solve generates the problem of cfg and measures a cold solve and a
// warm re-solve after cfg.ReplaceFrac of the rows (the oldest) are replaced
// by new ones, each cfg.Repeats times.
func Solve(ctx context.Context, cfg SolveConfig) (SolveReport, error) {
	if err := cfg.validate(); err != nil {
		return SolveReport{}, err
	}
	genStart := time.Now()
	replaced := cfg.replaced()
	data, y := benchData(cfg)
	rep := SolveReport{Algorithm: cmp.Or(cfg.Params.Algorithm, train.DefaultAlgorithm), Rows: cfg.Rows, Features: cfg.Features, NNZ: cfg.NNZ}
	rep.GenerateSeconds = time.Since(genStart).Seconds()
	window := func(first int) newton.Problem {
		rows := data.Rows[first : first+cfg.Rows]
		keys := make([]uint64, cfg.Rows)
		for i := range keys {
			keys[i] = uint64(first + i)
		}
		return newton.Problem{X: linalg.NewMatrix(rows, cfg.Features), Y: y[first : first+cfg.Rows], Keys: keys}
	}
	cold, next := window(0), window(replaced)
	for _, v := range cold.Y {
		if v != 0 {
			rep.Labeled++
		}
	}
	rep.Repeats = max(1, cfg.Repeats)
	var coldSeconds, warmSeconds []float64
	for r := range rep.Repeats {
		sol, err := newton.Solve(ctx, cold, cfg.Params.Binary(), nil)
		if err != nil {
			return rep, fmt.Errorf("cold solve: %w", err)
		}
		warm, err := newton.Solve(ctx, next, cfg.Params.Binary(), sol)
		if err != nil {
			return rep, fmt.Errorf("warm solve: %w", err)
		}
		coldSeconds, warmSeconds = append(coldSeconds, sol.Stats.Seconds), append(warmSeconds, warm.Stats.Seconds)
		if r == 0 {
			rep.Objective, rep.NewtonSteps, rep.CGLSIters = sol.Stats.Objective, sol.Stats.NewtonSteps, sol.Stats.CGLSIters
			rep.UnlabeledAccuracy = unlabeledAccuracy(data.Rows[:cfg.Rows], cold.Y, data.Labels, sol.W, cfg.Features)
			rep.WarmObjective, rep.WarmNewton, rep.WarmCGLS = warm.Stats.Objective, warm.Stats.NewtonSteps, warm.Stats.CGLSIters
		}
	}
	rep.ColdSeconds, rep.WarmSeconds = median(coldSeconds), median(warmSeconds)
	rep.RowsPerSecond = float64(cfg.Rows) / rep.ColdSeconds
	return rep, nil
}

func (cfg SolveConfig) validate() error {
	if cfg.Rows <= 0 || cfg.Features <= 0 || cfg.NNZ <= 0 || cfg.LabeledFrac <= 0 {
		return fmt.Errorf("bench solve needs positive rows, features, nnz and labeled fraction: %+v", cfg)
	}
	return nil
}

// replaced returns the number of rows replaced before the warm re-solve.
func (cfg SolveConfig) replaced() int {
	frac := cfg.ReplaceFrac
	if frac <= 0 {
		frac = 0.01
	}
	return max(1, int(float64(cfg.Rows)*frac))
}

// benchData generates the rows of cfg's problem (the window and the rows
// that replace its oldest), their planted labels, and the labels revealed
// to the learner (0 for the others).
func benchData(cfg SolveConfig) (synth.SparseText, []float64) {
	data := synth.GenerateSparseText(synth.SparseTextConfig{
		Rows: cfg.Rows + cfg.replaced(), Dim: cfg.Features, NNZ: cfg.NNZ, Noise: cfg.Noise, Seed: cfg.Seed,
	})
	return data, revealLabels(data.Labels, cfg.LabeledFrac, cfg.Seed)
}

// ExportProblem writes the rows of the cold solve of cfg, so that
// other solvers (SVMlin, `streamer fit`) can be held against it on the same
// data: to data a LIBSVM file with the planted labels, to labels SVMlin's
// labels file (1, -1, or 0 for a row whose label is not revealed).
func ExportProblem(cfg SolveConfig, data, labels io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	rows, y := benchData(cfg)
	dw, lw := bufio.NewWriter(data), bufio.NewWriter(labels)
	var line []byte
	for i, x := range rows.Rows[:cfg.Rows] {
		line = strconv.AppendFloat(line[:0], rows.Labels[i], 'g', -1, 64)
		for k, v := range x.Values {
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(x.Indices[k])+1, 10)
			line = append(line, ':')
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		line = append(line, '\n')
		if _, err := dw.Write(line); err != nil {
			return fmt.Errorf("writing row %d: %w", i, err)
		}
		line = strconv.AppendFloat(line[:0], y[i], 'g', -1, 64)
		line = append(line, '\n')
		if _, err := lw.Write(line); err != nil {
			return fmt.Errorf("writing label %d: %w", i, err)
		}
	}
	if err := dw.Flush(); err != nil {
		return fmt.Errorf("writing rows: %w", err)
	}
	if err := lw.Flush(); err != nil {
		return fmt.Errorf("writing labels: %w", err)
	}
	return nil
}

// ExportedProblem is what `streamer bench solve --export` prints: the files
// ExportProblemFiles wrote.
type ExportedProblem struct {
	Data   string `json:"data"`
	Labels string `json:"labels"`
	Rows   int    `json:"rows"`
}

// ExportProblemFiles writes ExportProblem's rows to prefix.svm and its
// labels to prefix.labels.
func ExportProblemFiles(cfg SolveConfig, prefix string) (ExportedProblem, error) {
	out := ExportedProblem{Data: prefix + ".svm", Labels: prefix + ".labels", Rows: cfg.Rows}
	data, err := os.Create(out.Data)
	if err != nil {
		return out, fmt.Errorf("export: %w", err)
	}
	labels, err := os.Create(out.Labels)
	if err != nil {
		data.Close()
		return out, fmt.Errorf("export: %w", err)
	}
	err = ExportProblem(cfg, data, labels)
	for _, f := range []*os.File{data, labels} {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		return out, fmt.Errorf("export %s: %w", prefix, err)
	}
	return out, nil
}

// revealLabels keeps each label with probability frac.
func revealLabels(labels []float64, frac float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	y := make([]float64, len(labels))
	for i, l := range labels {
		if r.Float64() < frac {
			y[i] = l
		}
	}
	return y
}

func unlabeledAccuracy(rows []vector.Vector, y, truth, w []float64, dim int) float64 {
	ok, n := 0, 0
	for i, x := range rows {
		if y[i] != 0 {
			continue
		}
		n++
		if (x.DotDense(w)+w[dim] >= 0) == (truth[i] > 0) {
			ok++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(ok) / float64(n)
}
