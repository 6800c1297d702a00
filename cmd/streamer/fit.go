package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/offline"
	"streamer/online/train"
	"streamer/snapshot"
)

func newFitCommand() *cobra.Command {
	var (
		cfg                      offline.FitConfig
		algo, laplacian, weights string
		out, transductiveOut     string
		unlabeled, cpuProfile    string
		conf                     configFlags
	)
	cmd := &cobra.Command{
		Use:   "fit",
		Short: "Train a model on a LIBSVM or JSONL file",
		Long: `fit trains a model on a file: LIBSVM/svmlight ("label idx:val ...", 1-based
indices, optionally .gz or .bz2) or JSONL in the example schema. JSONL
rows without a label are unlabeled. A LIBSVM line always starts with its
label, and one label value marks the unlabeled rows: 0 when the file's
labels are -1, +1 and 0 (SVMlin's convention) or all 0; in any other file
(digits, MNIST, a 0/1 problem) 0 is a class and every row is labeled.
--unlabeled-label N makes N mark the unlabeled rows in any file (0, or -1
as scikit-learn does, for a multi-class file whose classes include 0);
--unlabeled-label none makes every label a class. --labels FILE
(SVMlin's format: 1, -1 or 0 per line) overrides the labels. The
Laplacian algorithms build a kNN graph over the rows: exact for small
files, approximate (HNSW) beyond. It prints one JSON line and writes the
model with --out, in the snapshot format the service publishes. With
--config or --set (the service's configuration), JSONL rows are read as
the service reads its messages: input.examples says where their fields
are and features.* how they are hashed (--dim, when given, sets
features.dim), so that the model seeds a service so configured.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Params.Algorithm, err = train.ParseAlgorithm(algo); err != nil {
				return err
			}
			if cfg.Unlabeled, err = ingest.ParseUnlabeledLabel(unlabeled); err != nil {
				return fmt.Errorf("--unlabeled-label: %w", err)
			}
			if cfg.Graph.Laplacian.Weights, err = anngraph.ParseWeightKind(weights); err != nil {
				return err
			}
			switch laplacian {
			case "normalized", "unnormalized":
				cfg.Graph.Laplacian.Normalized = laplacian == "normalized"
			default:
				return fmt.Errorf("--laplacian %q: want normalized or unnormalized", laplacian)
			}
			// Before the data is read and the graph built: lapsvm with the
			// default λ_I = 0 would fail only after both.
			if err := cfg.Params.Validate(); err != nil {
				return fmt.Errorf("fit: %w (see --lambda, --lambda-u, --lambda-i, --r, --max-switch, --cost-pos, --cost-neg, --sr-delta, --sr-gamma, --sr-k)", err)
			}
			if conf.given() {
				dec, err := conf.decoder()
				if err != nil {
					return err
				}
				features := dec.Featurizer
				if cmd.Flags().Changed("dim") {
					features.Dim = cfg.Features.Dim
				}
				cfg.Features, cfg.Examples = features, dec.Examples
			}
			cfg.BadLines = cmd.ErrOrStderr()
			cfg.Warnings = cmd.ErrOrStderr()
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			fit, err := offline.RunFit(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if out != "" {
				if err := snapshot.WriteFile(out, fit.Snapshot); err != nil {
					return err
				}
			}
			if transductiveOut != "" {
				if err := writeLines(transductiveOut, fit.Predictions); err != nil {
					return err
				}
			}
			return writeReport(cmd.OutOrStdout(), "", fit.Report)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", "", "training file: LIBSVM/svmlight (.gz, .bz2) or JSONL")
	f.StringVar(&cfg.Labels, "labels", "", "SVMlin label file (1, -1 or 0 per line) overriding the file's labels")
	addUnlabeledLabelFlag(f, &unlabeled)
	f.StringVar(&algo, "algo", "svm", "rls, svm, laprls, lapsvm, tsvm, da, sr or auto (for three classes or more: sr on a graph that follows the labels, lapsvm on one that follows them better than chance, else tsvm; tsvm for two)")
	addParamFlags(f, &cfg.Params)
	f.IntVar(&cfg.Graph.K, "knn", 10, "neighbours per row in the kNN graph")
	f.StringVar(&laplacian, "laplacian", "normalized", "normalized or unnormalized (D - W)")
	f.IntVar(&cfg.Graph.Laplacian.Degree, "laplacian-degree", 0, "p in M = L^p; 0 is 3 for auto, 1 for the others")
	f.StringVar(&weights, "weights", "heat", "edge weights: heat, cosine or binary")
	f.Float64Var(&cfg.Graph.Laplacian.Sigma, "sigma", 0, "heat kernel width; 0 is the mean kNN distance")
	f.IntVar(&cfg.Features.Dim, "dim", 1<<18, "hashed feature space of JSONL text and named features")
	f.StringVar(&cfg.Kernel.Kind, "kernel", "none", "none, or rbf: learn over a Nyström map of the Gaussian kernel (the kNN graph stays on the input rows); predict reads the map from the model")
	f.IntVar(&cfg.Kernel.Landmarks, "landmarks", 1000, "landmarks of the kernel map, drawn from the rows (all rows when fewer)")
	f.Float64Var(&cfg.Kernel.Gamma, "gamma", 0, "γ of the kernel exp(-γ‖x-z‖²); 0 is 1 / the median squared distance between landmarks")
	f.StringVar(&cfg.Name, "name", "default", "model name in the snapshot")
	f.StringVar(&out, "out", "", "write the model (a snapshot file) here")
	f.StringVar(&transductiveOut, "transductive-out", "", "write the predicted label of every training row here, one per line")
	conf.register(f)
	// For profiling the solver; not part of the command's interface.
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	_ = f.MarkHidden("cpuprofile")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

func writeLines(path string, lines []string) error {
	return writeFile(path, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		return w.Flush()
	})
}

// predictScoring returns the options of predict in the configuration the
// user named: rows read where input.examples says, marked for review and
// explained as the service would.
func predictScoring(conf configFlags) ([]offline.PredictOption, error) {
	cfg, err := conf.load()
	if err != nil {
		return nil, err
	}
	pcfg, err := cfg.Pipeline()
	if err != nil {
		return nil, err
	}
	return []offline.PredictOption{offline.WithMapping(pcfg.Decoder.Examples), offline.WithScoring(pcfg)}, nil
}

func newPredictCommand() *cobra.Command {
	var model, data, out, unlabeled string
	var conf configFlags
	cmd := &cobra.Command{
		Use:   "predict",
		Short: "Apply a model to a LIBSVM or JSONL file",
		Long: `predict scores every record of a file with a model (a snapshot file, from
fit or from the service) and writes one prediction per line, in the
service's prediction schema, to --out (standard output by default). When the
file carries labels it prints JSON with accuracy and macro_f1. The label
that marks a LIBSVM row unlabeled is read as by fit (see fit --help and
--unlabeled-label). With --config or --set, JSONL rows are read where the
configuration's input.examples says, and predictions are marked for review
(review.*) and explained (predictions.explain) as the service would mark
and explain them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mark, err := ingest.ParseUnlabeledLabel(unlabeled)
			if err != nil {
				return fmt.Errorf("--unlabeled-label: %w", err)
			}
			opts := []offline.PredictOption{offline.WithUnlabeledLabel(mark)}
			if conf.given() {
				scoring, err := predictScoring(conf)
				if err != nil {
					return err
				}
				opts = append(opts, scoring...)
			}
			snap, err := snapshot.ReadFile(model)
			if err != nil {
				return err
			}
			w, summary := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w, summary = f, cmd.OutOrStdout()
			}
			rep, err := offline.PredictWarning(snap, data, w, cmd.ErrOrStderr(), opts...)
			if err != nil {
				return err
			}
			return writeReport(summary, "", rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "model file (a snapshot)")
	f.StringVar(&data, "data", "", "file to score: LIBSVM/svmlight (.gz, .bz2) or JSONL")
	f.StringVar(&out, "out", "", "write the predictions here instead of standard output")
	addUnlabeledLabelFlag(f, &unlabeled)
	conf.register(f)
	_ = cmd.MarkFlagRequired("model")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

// addUnlabeledLabelFlag binds --unlabeled-label, the LIBSVM label that
// marks unlabeled rows, for ingest.ParseUnlabeledLabel.
func addUnlabeledLabelFlag(f *pflag.FlagSet, v *string) {
	f.StringVar(v, "unlabeled-label", "auto", "LIBSVM files: the label that marks unlabeled rows (a number, such as 0 or -1), none (every label is a class), or auto: 0 in a file of -1, +1 and 0 labels or of 0 alone, else none")
}
