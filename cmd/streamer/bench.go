package main

import "github.com/spf13/cobra"

func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the solver, the graph and the running service",
	}
	cmd.AddCommand(newBenchANNCommand())
	cmd.AddCommand(newBenchSolveCommand())
	cmd.AddCommand(newBenchReplayCommand())
	cmd.AddCommand(newBenchLoadCommand())
	cmd.AddCommand(newBenchHTTPCommand())
	cmd.AddCommand(newBenchDrainCommand())
	cmd.AddCommand(newBenchScaleCommand())
	return cmd
}
