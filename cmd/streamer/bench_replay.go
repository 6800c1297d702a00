package main

import (
	"github.com/spf13/cobra"

	"streamer/bench"
)

func newBenchReplayCommand() *cobra.Command {
	var (
		cfg    bench.ReplayConfig
		report string
	)
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Measure replay throughput on generated examples from the embedded broker",
		Long: `replay produces --examples generated text examples to an embedded broker,
trains a model on the first 5000, and replays every example with that model
pinned (or --retrain), counting records per second end to end: reading,
decoding, featurizing, scoring and encoding the predictions (which are
discarded).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := bench.Replay(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), report, rep)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Examples, "examples", 1_000_000, "examples to produce and replay")
	f.IntVar(&cfg.Partitions, "partitions", 4, "partitions of the examples topic")
	f.BoolVar(&cfg.Retrain, "retrain", false, "retrain as the live service would instead of scoring with a pinned model")
	f.Uint64Var(&cfg.Seed, "seed", 1, "generator seed")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	return cmd
}
