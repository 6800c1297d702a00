package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"streamer/brokers/embedded"
	"streamer/service"
)

func newRunCommand() *cobra.Command {
	var (
		conf       configFlags
		cpuProfile string
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the streaming service",
		Long: `run consumes examples and labels, publishes a prediction for every example
and model snapshots, re-solves the model as labels arrive, and restores
itself from its newest snapshot. configs/streamer.yaml documents every key;
STREAMER_* environment variables and --set key=value override them. It
stops cleanly on SIGINT or SIGTERM.

kafka.brokers has no default: run refuses to start until it names the
cluster (STREAMER_KAFKA_BROKERS=host:9092,host2:9092, --set
kafka.brokers=host:9092, or the --config file). --set kafka.brokers=embedded
asks for a private in-process broker (franz-go's kfake), started first, to
try the service with no Kafka: only what knows its address can reach it,
and its records go when the process stops (streamer demo runs a whole
stream on one).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := conf.load()
			if err != nil {
				return err
			}
			if err := cfg.CheckBrokers(true); err != nil {
				return err
			}
			log := newLogger(cmd.ErrOrStderr(), cfg.Log)
			if cfg.Brokers().IsEmbedded() {
				cluster, err := embedded.Start(embedded.Config{Partitions: cfg.Kafka.Partitions, Log: log})
				if err != nil {
					return err
				}
				defer cluster.Close()
				cfg.Kafka.Brokers = cluster.Addrs()
				log.Info("embedded Kafka cluster started", "addrs", cluster.Addrs(), "reach", "private to this process: its records go when it stops")
			}
			svc, err := service.New(cfg, log)
			if err != nil {
				return err
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			return svc.Run(cmd.Context())
		},
	}
	conf.register(cmd.Flags())
	// For `bench drain --cpuprofile`; not part of the service's interface.
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

func newBrokerCommand() *cobra.Command {
	var (
		cfg embedded.Config
	)
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run a standalone in-process Kafka-protocol broker (kfake)",
		Long: `broker runs franz-go's kfake cluster with one broker on --listen, for use
with any Kafka client (kcat, the service with kafka.brokers set to the
address). Topics are created on first use. It stops on SIGINT or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Log = slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
			c, err := embedded.Start(cfg)
			if err != nil {
				return err
			}
			defer c.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "broker listening on %v\n", c.Addrs())
			<-cmd.Context().Done()
			fmt.Fprintln(os.Stderr, "broker stopping")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:9092", "address to listen on (kfake binds 127.0.0.1)")
	f.IntVar(&cfg.Partitions, "partitions", 1, "partitions of topics created on first use")
	f.StringVar(&cfg.DataDir, "data-dir", "", "keep the broker's data in this directory across restarts")
	return cmd
}

// startCPUProfile profiles the process into path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
