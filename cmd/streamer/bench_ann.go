package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"streamer/anngraph"
	"streamer/ingest"
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

--generate dense draws clustered Gaussian points (synth.Clusters; 784
dimensions by default, Euclidean); --generate sparse draws sparse text-like
rows (synth.GenerateSparseText; 2^18 dimensions with about 80 non-zeros by
default, cosine). Both generate six window lengths of points unless
--points says otherwise. --data reads a file of
examples (JSONL example schema, or LIBSVM; .gz or .bz2 compressed) with the
default decoder, in file order; its vectors must be all dense (vector
payloads) or all sparse; the metric defaults to cosine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var xs []vector.Vector
			switch {
			case data != "" && generate != "":
				return fmt.Errorf("--data and --generate exclude each other")
			case data != "":
				recs, err := ingest.ReadAll(data, nil)
				if err != nil {
					return err
				}
				xs = make([]vector.Vector, len(recs))
				for i, r := range recs {
					xs[i] = r.Vector
				}
				if metric == "" {
					metric = "cosine"
				}
			case generate == "dense":
				xs, _ = synth.Clusters(synth.ClusterConfig{
					Points: orDefault(points, 6*cfg.MaxExamples), Dim: orDefault(dim, 784), Seed: seed,
				})
				if metric == "" {
					metric = "euclidean"
				}
			case generate == "sparse":
				xs = synth.GenerateSparseText(synth.SparseTextConfig{
					Rows: orDefault(points, 6*cfg.MaxExamples), Dim: orDefault(dim, 1<<18), NNZ: nnz, Seed: seed,
				}).Rows
				if metric == "" {
					metric = "cosine"
				}
			default:
				return fmt.Errorf("--generate %q: want dense or sparse (or give --data)", generate)
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
			return writeReport(cmd.OutOrStdout(), report, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "file of examples to stream: JSONL example schema or LIBSVM")
	f.StringVar(&generate, "generate", "", "generate the points instead: dense or sparse")
	f.IntVar(&points, "points", 0, "points to generate (default six window lengths)")
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
