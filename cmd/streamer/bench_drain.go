package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"streamer/bench/servicebench"
)

func newBenchDrainCommand() *cobra.Command {
	var (
		cfg    servicebench.DrainConfig
		report string
	)
	cmd := &cobra.Command{
		Use:   "drain",
		Short: "Measure how fast the service catches up with a topic filled before it starts",
		Long: `drain starts an embedded broker, first writes --examples examples to the
examples topic (generated text, or the texts of --text-from, a JSONL file
such as data/debian-sections.jsonl.gz, cycled until there are enough), a
--label-rate fraction of them with a label on the labels topic, and only
then starts the service as a child process. It times the service from its
start until the group's committed offsets reach the end of every input
partition, and prints examples/s, the peak resident memory of the service
(rss_bytes, the kernel's VmHWM), and kept_fraction, the fraction of the
unlabeled examples its learner kept (streamer_window_kept_ratio).

p50_ms and p99_ms are quantiles of arrival-to-publish latency as a
catch-up drain has it: every example has arrived before the service
starts, so an example's latency is the time from the service's start to
the Kafka timestamp of its prediction (set when the service's writer sends
it). Process start and the group join are included; p99 is close to the
drain's length by construction.

The report also gives solves (the solves finished during the drain),
service_cpu_seconds and harness_cpu_seconds (the processor time of the
service and of this process, which holds the embedded broker, from the
service's start to its last commit: whether the drain was bound by the
processors) and stop_seconds (from SIGTERM to the service's exit).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChildBench(cmd, &cfg.Executable, report, func(ctx context.Context) (any, error) { return servicebench.Drain(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Examples, "examples", 200000, "examples written before the service starts")
	f.StringVar(&cfg.TextFrom, "text-from", "", "JSONL file (.gz allowed) whose examples (text or vector) are cycled; empty generates text")
	f.Float64Var(&cfg.LabelRate, "label-rate", 0.05, "fraction of the examples that also get a label on the labels topic")
	f.IntVar(&cfg.Partitions, "partitions", 4, "partitions of the input topics (kafka.partitions of the service)")
	f.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "longest the drain may take")
	f.StringArrayVar(&cfg.Set, "set", nil, "more configuration overrides for the service (key=value)")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the service to this file")
	f.MarkHidden("cpuprofile")
	return cmd
}
