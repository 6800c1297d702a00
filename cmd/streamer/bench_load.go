package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"streamer/bench/servicebench"
)

func newBenchLoadCommand() *cobra.Command {
	var (
		cfg    servicebench.LoadConfig
		report string
	)
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Measure sustained throughput and memory under a producer going as fast as it can",
		Long: `load starts an embedded broker, runs the service as a child process, and
has --producers producers write generated text examples (a tenth with a
late label) as fast as the broker takes them for --duration. It reports the
predictions the service published per second, its peak resident memory and
its memory at each quarter of the run: with backpressure the memory stays
bounded by the window and the queues while the producers run ahead.

The embedded broker keeps its records in this process's memory. The
harness deletes what the service has read (as a broker's retention would)
and the predictions, and the producers wait while more than --max-backlog
examples are written but not yet predicted; with 0 they never wait, and
the backlog grows by tens of thousands of examples a second.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChildBench(cmd, &cfg.Executable, report, func(ctx context.Context) (any, error) { return servicebench.Load(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 30*time.Second, "how long the producers run")
	f.IntVar(&cfg.Producers, "producers", 2, "concurrent producers")
	f.IntVar(&cfg.Window, "window", 20000, "window.max_examples of the service")
	f.Int64Var(&cfg.MaxBacklog, "max-backlog", 1_000_000, "examples written but not yet predicted beyond which the producers wait (0: no bound)")
	f.StringArrayVar(&cfg.Set, "set", nil, "more configuration overrides for the service (key=value)")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	return cmd
}
