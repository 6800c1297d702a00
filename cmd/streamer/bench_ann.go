package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"streamer/anngraph"
	"streamer/synth"
	"streamer/vector"
)

func newBenchANNCommand() *cobra.Command {
	var (
		data, generate, metric, report string
		points, dim, nnz, sample       int
		seed                           uint64
		cfg                            anngraph.Config
	)
	cmd := &cobra.Command{
		Use:   "ann",
		Short: "Stream vectors through the sliding-window kNN graph and measure recall@k and rates",
		Long: `ann streams vectors through the sliding-window approximate kNN graph, then
checks the kNN lists of a sample of live points against exact brute force
over the live window (recall@k) and reports insert, eviction and query rates
and memory per point. Give it at least six window lengths of points so that
the window has slid five lengths when recall is measured.

--generate dense draws clustered Gaussian points (synth.Clusters; default
60000 points of 784 dimensions, Euclidean); --generate sparse draws sparse
text-like rows (synth.GenerateSparseText; default 300000 rows of 2^18
dimensions with about 80 non-zeros, cosine).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if data != "" {
				return fmt.Errorf("--data is not wired yet: no file reader in package ingest; use --generate")
			}
			var xs []vector.Vector
			switch generate {
			case "dense":
				xs, _ = synth.Clusters(synth.ClusterConfig{
					Points: orDefault(points, 60000), Dim: orDefault(dim, 784), Seed: seed,
				})
				if metric == "" {
					metric = "euclidean"
				}
			case "sparse":
				xs = synth.GenerateSparseText(synth.SparseTextConfig{
					Rows: orDefault(points, 300000), Dim: orDefault(dim, 1<<18), NNZ: nnz, Seed: seed,
				}).Rows
				if metric == "" {
					metric = "cosine"
				}
			default:
				return fmt.Errorf("--generate %q: want dense or sparse", generate)
			}
			m, err := anngraph.ParseMetric(metric)
			if err != nil {
				return err
			}
			cfg.Metric = m
			cfg.Seed = seed
			rep, err := anngraph.RunBench(cmd.Context(), anngraph.BenchConfig{
				Window: cfg, Sample: sample, Seed: seed,
			}, xs)
			if err != nil {
				return err
			}
			out, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			if report != "" {
				return os.WriteFile(report, append(out, '\n'), 0o644)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "file of examples to stream: JSONL example schema or LIBSVM")
	f.StringVar(&generate, "generate", "", "generate the points instead: dense or sparse")
	f.IntVar(&points, "points", 0, "points to generate (default 60000 dense, 300000 sparse)")
	f.IntVar(&dim, "dim", 0, "dimensions of generated points (default 784 dense, 2^18 sparse)")
	f.IntVar(&nnz, "nnz", 0, "mean non-zeros of generated sparse rows (default 80)")
	f.IntVar(&cfg.MaxExamples, "window", 20000, "window length in points")
	f.IntVar(&cfg.K, "k", anngraph.DefaultK, "neighbours per point")
	f.StringVar(&metric, "metric", "", "cosine or euclidean (default euclidean for dense, cosine for sparse)")
	f.IntVar(&cfg.M, "m", anngraph.DefaultM, "links per point and layer of the navigable graph (2M on layer 0)")
	f.IntVar(&cfg.EfConstruction, "ef-construction", anngraph.DefaultEfConstruction, "candidate list size of an insert's search")
	f.IntVar(&cfg.EfSearch, "ef-search", anngraph.DefaultEfSearch, "candidate list size of queries and list repairs")
	f.IntVar(&cfg.ListDepth, "list-depth", 0, "candidates kept per kNN list (default 2k)")
	f.BoolVar(&cfg.Exhaustive, "exhaustive", false, "exact brute-force kNN lists instead of the navigable graph")
	f.IntVar(&sample, "sample", 1000, "live points whose lists are checked against brute force")
	f.Uint64Var(&seed, "seed", 1, "seed of the generated data, the graph's levels and the sample")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	return cmd
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
