package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"streamer/bench/servicebench"
)

func newBenchScaleCommand() *cobra.Command {
	var (
		cfg    servicebench.ScaleConfig
		report string
	)
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Measure scorer replicas sharing the partitions, and a standby learner's takeover",
		Long: `scale starts an embedded broker and writes --examples examples (5% of
them labeled) to the examples topic. It runs two learners as child
processes and times the standby's takeover, from the active learner's
SIGKILL (the lease moves after kafka.session_timeout), then from its
SIGTERM (it leaves the lease group), to the standby's /readyz answering 200.
Then, for each --scorers count, it starts that many scorers in a group of
their own and times them from their start to their group's last commit on
the examples topic (start, group join and snapshot read included). Last,
it starts --rolling-scorers scorers in a group of their own, lets them
catch up, streams --rolling-rate examples a second and restarts them one by
one (SIGTERM, then a new scorer, ready and in the stable group before the
next goes), and reports the group's rebalances and the longest pause in
the predictions of an input partition from the first SIGTERM on. Every
process shares the machine's cores with the broker.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChildBench(cmd, &cfg.Executable, report, func(ctx context.Context) (any, error) { return servicebench.Scale(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Examples, "examples", 100000, "examples written before the processes start")
	f.IntSliceVar(&cfg.Scorers, "scorers", []int{1, 2, 4}, "numbers of scorers to measure")
	f.IntVar(&cfg.Partitions, "partitions", 8, "partitions of the input topics")
	f.DurationVar(&cfg.SessionTimeout, "session-timeout", 6*time.Second, "kafka.session_timeout of every process (the embedded broker's least is 6s)")
	f.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "longest each phase may take")
	f.IntVar(&cfg.RollingScorers, "rolling-scorers", 3, "scorers restarted one by one in the rolling restart")
	f.IntVar(&cfg.RollingRate, "rolling-rate", 400, "examples per second streamed during the rolling restart")
	f.StringArrayVar(&cfg.Set, "set", nil, "more configuration overrides for every process (key=value)")
	f.StringVar(&report, "report", "", "also write the JSON report to this file")
	return cmd
}
