package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"streamer/demo"
)

func newDemoCommand() *cobra.Command {
	var (
		cfg     demo.Config
		conf    configFlags
		report  string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole job on an embedded broker and print a summary",
		Long: `demo starts an in-process Kafka-protocol broker, produces a two-class text
stream (or --data FILE) with a few labels revealed late, runs the service on
it, reads the predictions back and prints a summary: examples, labels,
predictions, prequential accuracy on the revealed labels, the same for the
supervised-only learner, solves, snapshots and seconds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := conf.load(demo.ServiceOverrides()...)
			if err != nil {
				return err
			}
			cfg.Service = sc
			log := newLogger(cmd.ErrOrStderr(), sc.Log)
			if !verbose {
				log = newLogger(io.Discard, sc.Log)
			}
			rep, err := demo.Run(cmd.Context(), cfg, log)
			if err != nil {
				return err
			}
			printDemo(cmd.OutOrStdout(), rep)
			return writeReport(io.Discard, report, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", "", "JSONL (or .jsonl.gz) file of labeled examples to stream instead of generated text")
	f.IntVar(&cfg.Examples, "examples", 6000, "generated examples")
	f.Float64Var(&cfg.LabelRate, "label-rate", 0.05, "fraction of labels revealed")
	f.IntVar(&cfg.LabelDelay, "label-delay", 100, "examples between an example and its revealed label")
	f.Float64Var(&cfg.Rate, "rate", 400, "examples produced per second")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the generated stream and of the labels revealed")
	f.StringVar(&report, "report", "", "write the summary as JSON to this file")
	conf.register(f)
	f.BoolVarP(&verbose, "verbose", "v", false, "show the service's logs")
	return cmd
}

func printDemo(w io.Writer, r demo.Report) {
	fmt.Fprintf(w, "examples             %d\n", r.Examples)
	fmt.Fprintf(w, "labels revealed      %d\n", r.Labels)
	fmt.Fprintf(w, "predictions          %d\n", r.Predictions)
	if r.Scored > 0 {
		fmt.Fprintf(w, "accuracy             %.4f  (prequential, on the revealed labels)\n", r.Accuracy)
		fmt.Fprintf(w, "supervised accuracy  %.4f  (same learner, unlabeled examples ignored)\n", r.SupervisedAccuracy)
	} else {
		fmt.Fprintf(w, "accuracy             n/a     (no revealed label met a prediction made by a model)\n")
	}
	switch {
	case r.ExamplesLabeled == 0:
		fmt.Fprintf(w, "agreement            n/a     (no example of the file carries a label)\n")
	case r.ExamplesLabeled < r.Examples:
		fmt.Fprintf(w, "agreement            %.4f  (predictions matching the true label, the %d examples that carry one)\n", r.Agreement, r.ExamplesLabeled)
	default:
		fmt.Fprintf(w, "agreement            %.4f  (predictions matching the true label, every example)\n", r.Agreement)
	}
	fmt.Fprintf(w, "solves               %d  (model version %d)\n", r.Solves, r.ModelVersion)
	fmt.Fprintf(w, "snapshots            %d\n", r.Snapshots)
	fmt.Fprintf(w, "seconds              %.1f\n", r.Seconds)
}
