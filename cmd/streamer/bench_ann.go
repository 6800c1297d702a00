package main

import (
	"github.com/spf13/cobra"

	"streamer/anngraph"
	"streamer/bench"
)

func newBenchANNCommand() *cobra.Command {
	var (
		cfg    bench.ANNConfig
		report string
	)
	cmd := &cobra.Command{
		Use:   "ann",
		Short: "Stream vectors through the sliding-window kNN graph and measure recall@k and rates",
		Long: `ann streams vectors through the sliding-window approximate kNN graph, then
checks the kNN lists of a sample of live points against exact brute force
over the live window (recall@k) and reports insert, eviction and query rates
and memory per point. Give it at least six window lengths of points so that
the window has slid five lengths when recall is measured.

fill_inserts_per_sec is the rate of the first window length of inserts, into
an empty window: the figure hnswlib's fill rate compares with (--export
writes the points for scripts/hnswlib/fill.cc, which times hnswlib on them;
scripts/hnswlib/README.md). fill_cpu_inserts_per_sec is the same per second
of process CPU time, steadier on a shared machine.

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
			rep, err := bench.ANN(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), report, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", "", "file of examples to stream: JSONL example schema or LIBSVM")
	f.StringVar(&cfg.Generate, "generate", "", "generate the points instead: dense or sparse")
	f.IntVar(&cfg.Points, "points", 0, "points to generate (default six window lengths)")
	f.IntVar(&cfg.Dim, "dim", 0, "dimensions of generated points (default 784 dense, 2^18 sparse)")
	f.IntVar(&cfg.NNZ, "nnz", 0, "mean non-zeros of generated sparse rows (default 80)")
	f.IntVar(&cfg.Window.MaxExamples, "window", 20000, "window length in points")
	f.IntVar(&cfg.Window.K, "k", anngraph.DefaultK, "neighbours per point")
	f.StringVar(&cfg.Metric, "metric", "", "cosine or euclidean (default euclidean for dense, cosine for sparse)")
	f.IntVar(&cfg.Window.M, "m", anngraph.DefaultM, "links per point and layer of the navigable graph (2M on layer 0)")
	f.IntVar(&cfg.Window.EfConstruction, "ef-construction", anngraph.DefaultEfConstruction, "candidate list size of an insert's search")
	f.IntVar(&cfg.Window.EfSearch, "ef-search", anngraph.DefaultEfSearch, "candidate list size of queries and list repairs")
	f.IntVar(&cfg.Window.ListDepth, "list-depth", 0, "candidates kept per kNN list (default 2k)")
	f.BoolVar(&cfg.Window.Exhaustive, "exhaustive", false, "exact brute-force kNN lists instead of the navigable graph")
	f.IntVar(&cfg.Batch, "batch", 0, "insert the points in batches of this many, placed in parallel (0: one by one, on one core)")
	f.IntVar(&cfg.Window.InsertWorkers, "workers", 0, "goroutines that place a batch's points (default: GOMAXPROCS)")
	f.IntVar(&cfg.Sample, "sample", 1000, "live points whose lists are checked against brute force")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the generated data, the graph's levels and the sample")
	f.StringVar(&cfg.Export, "export", "", "also write the points to this file for the hnswlib reference (scripts/hnswlib)")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	return cmd
}
