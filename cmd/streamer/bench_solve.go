package main

import (
	"github.com/spf13/cobra"

	"streamer/bench"
	"streamer/online/train"
)

func newBenchSolveCommand() *cobra.Command {
	var (
		cfg     bench.SolveConfig
		classes bench.ClassesConfig
		algo    string
		report  string
		export  string
	)
	cmd := &cobra.Command{
		Use:   "solve",
		Short: "Measure a cold solve and a warm re-solve on a generated problem (text-like, or clustered with --classes)",
		Long: `solve generates a text-like problem (L2-normalized positive rows with
Zipfian words grouped by topic, a planted separator, some label noise),
reveals a fraction of its labels, solves it cold, replaces 1% of the rows
(the oldest) as a sliding window does, and re-solves warm from the last
solution. It prints JSON with cold_seconds, warm_seconds, objective,
newton_steps, cgls_iters and rows_per_second. With --repeat N both solves
run N times, in turn, and the seconds are medians: on a shared machine one
run can be 10-15% off.

With --export PREFIX it solves nothing: it writes the rows of the cold solve
to PREFIX.svm (LIBSVM, with the planted labels) and PREFIX.labels (SVMlin's
labels file: 1, -1, or 0 where the label is not revealed), to hold other
solvers against the same data, SVMlin or 'streamer fit --data PREFIX.svm
--labels PREFIX.labels'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := train.ParseAlgorithm(algo)
			if err != nil {
				return err
			}
			cfg.Params.Algorithm = a
			if export != "" {
				written, err := bench.ExportProblemFiles(cfg, export)
				if err != nil {
					return err
				}
				return writeReport(cmd.OutOrStdout(), "", written)
			}
			if classes.Classes > 0 {
				return benchClasses(cmd, cfg, classes, report)
			}
			rep, err := bench.Solve(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), report, rep)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Rows, "rows", 200000, "rows in the window")
	f.IntVar(&cfg.Features, "features", 1<<18, "feature space size")
	f.IntVar(&cfg.NNZ, "nnz", 80, "mean non-zeros per row")
	f.Float64Var(&cfg.LabeledFrac, "labeled-frac", 0.01, "fraction of rows whose label is revealed")
	f.Float64Var(&cfg.Noise, "noise", 0.05, "label noise of the planted separator")
	f.Float64Var(&cfg.ReplaceFrac, "replace-frac", 0.01, "fraction of rows replaced before the warm re-solve")
	f.Uint64Var(&cfg.Seed, "seed", 1, "generator seed")
	f.StringVar(&algo, "algo", "tsvm", "algorithm: rls, svm, laprls, lapsvm, tsvm, da, sr or auto")
	f.IntVar(&classes.Classes, "classes", 0, "multi-class bench with this many classes: cold solve, the same rows by a supervised svm (on the revealed labels, and on every label), and a warm re-solve")
	f.BoolVar(&classes.Dense, "dense", false, "with --classes: dense clustered rows of --dim values instead of text-like rows")
	f.IntVar(&classes.Dim, "dim", 784, "with --classes --dense: the rows' dimension")
	f.IntVar(&classes.Degree, "laplacian-degree", 0, "with --classes: p in M = L^p; 0 is 3 for auto, 1 for the others, as in the service")
	f.IntVar(&cfg.Repeats, "repeat", 1, "run each solve this many times, in turn, and report the median seconds")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	f.StringVar(&export, "export", "", "write the problem to `PREFIX`.svm and PREFIX.labels instead of solving it")
	addParamFlags(f, &cfg.Params)
	return cmd
}

// benchClasses runs the multi-class bench with the shared flags of cfg.
func benchClasses(cmd *cobra.Command, cfg bench.SolveConfig, c bench.ClassesConfig, report string) error {
	c.Rows, c.NNZ, c.LabeledFrac, c.ReplaceFrac, c.Seed, c.Repeats, c.Params = cfg.Rows, cfg.NNZ, cfg.LabeledFrac, cfg.ReplaceFrac, cfg.Seed, cfg.Repeats, cfg.Params
	if !c.Dense {
		c.Dim = cfg.Features
	}
	rep, err := bench.Classes(cmd.Context(), c)
	if err != nil {
		return err
	}
	return writeReport(cmd.OutOrStdout(), report, rep)
}
