package main

import (
	"time"

	"github.com/spf13/cobra"

	"streamer/bench/servicebench"
)

func newBenchHTTPCommand() *cobra.Command {
	var (
		cfg    servicebench.HTTPConfig
		report string
	)
	cmd := &cobra.Command{
		Use:   "http",
		Short: "Measure synchronous scoring over POST /v1/predict",
		Long: `http starts an embedded broker and the service in this process, both on
loopback, has the service learn from --train generated text examples (one
in four labeled) until its model is solved on the whole window, then has
--clients concurrent clients send POST /v1/predict for --duration with one
example per request, and for another --duration with --batch examples per
request. It prints requests and examples per second and the p50 and p99
latency of each kind. Clients, service and broker share the machine's cores.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := servicebench.HTTP(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), report, rep)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long each phase (single, then batch) runs")
	f.IntVar(&cfg.Clients, "clients", 4, "concurrent clients")
	f.IntVar(&cfg.Batch, "batch", 100, "examples per batch request (at most limits.max_batch_examples)")
	f.IntVar(&cfg.Train, "train", 4000, "labeled and unlabeled examples the service learns from before the measure")
	f.Uint64Var(&cfg.Seed, "seed", 1, "generator seed")
	f.StringArrayVar(&cfg.Set, "set", nil, "more configuration overrides for the service (key=value)")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	return cmd
}
