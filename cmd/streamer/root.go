package main

import (
	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "streamer",
		Short:         "Real-time semi-supervised classification on Kafka",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newBrokerCommand(), newDemoCommand(), newEvalCommand(),
		newFitCommand(), newPredictCommand(), newReplayCommand(), newSnapshotCommand(), newModelCommand(), newBenchCommand(),
		newGenerateCommand())
	return root
}
