package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"streamer/snapshot"
)

func newSnapshotCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "snapshot", Short: "Look at model snapshots"}
	var (
		fromTopic bool
		version   uint64
		conf      configFlags
	)
	inspect := &cobra.Command{
		Use:   "inspect [FILE]",
		Short: "Print a summary of a snapshot file, or of the newest snapshot on the topic",
		Long: `inspect prints a snapshot's model name, version, classes, featurizer and
solver settings, window, statistics, per-problem weights and stream
offsets. With --topic it reads the snapshot topic of the configured cluster
(--config, --set) and summarizes the newest complete snapshot of the
configured model, or with --version N that version, from the history topic
(snapshot.history_topic) or the snapshot topic.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var snap *snapshot.Snapshot
			var err error
			switch {
			case fromTopic:
				snap, err = onTopic(cmd, &conf, version)
			case len(args) == 1:
				snap, err = snapshot.ReadFile(args[0])
			default:
				return fmt.Errorf("give a snapshot FILE or --topic")
			}
			if err != nil {
				return err
			}
			return snapshot.Summarize(cmd.OutOrStdout(), snap)
		},
	}
	f := inspect.Flags()
	f.BoolVar(&fromTopic, "topic", false, "read the newest snapshot from the snapshot topic")
	f.Uint64Var(&version, "version", 0, "with --topic: this version, from the history or snapshot topic")
	conf.register(f)
	cmd.AddCommand(inspect)
	return cmd
}

// onTopic returns the configured model's snapshot at version, or its
// newest when version is 0.
func onTopic(cmd *cobra.Command, conf *configFlags, version uint64) (*snapshot.Snapshot, error) {
	cfg, err := conf.load()
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckBrokers(false); err != nil {
		return nil, fmt.Errorf("--topic: %w", err)
	}
	bc := cfg.Brokers()
	conn, err := bc.Connect(bc.Brokers)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if version != 0 {
		return snapshotVersion(cmd.Context(), conn, cfg, snapshot.AnyEpochVersion(version))
	}
	c, ok, _, err := conn.ReadSnapshots(cmd.Context(), cfg.Kafka.Topics.Snapshots, cfg.Model.Name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no complete snapshot of model %q on topic %s", cfg.Model.Name, cfg.Kafka.Topics.Snapshots)
	}
	return snapshot.Decode(c.Data)
}
