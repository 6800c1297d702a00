package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"streamer/brokers"
	"streamer/config"
	"streamer/control"
	"streamer/publish"
	"streamer/replay"
	"streamer/schemaregistry"
	"streamer/snapshot"
)

type replayFlags struct {
	from, to, partitions string
	snapshotFile         string
	snapshotVersion      uint64
	snapshotEpoch        uint64
	epochGiven           bool // --snapshot-epoch was given
	pinned               bool
	retrain              bool
	outTopic, outFile    string
	conf                 configFlags
}

func newReplayCommand() *cobra.Command {
	var fl replayFlags
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Recompute predictions over a stretch of the examples topic (backfills)",
		Long: `replay reads the examples topic over [--from, --to) (offsets, applied to
every partition, or RFC 3339 times, resolved through the broker's
offset-for-time lookup; --to end is the end when the replay starts), each
partition with its own reader, and writes a prediction for every example in
the service's schema to --out-topic (in output.format) or --out-file (JSON
lines), each marked for review and explained as the service would mark and
explain it; nothing is written to the review topic. With --snapshot FILE or
--snapshot-version N (from the history topic, snapshot.history_topic, or
the snapshot topic; of epoch --snapshot-epoch E, which may be left out when
one epoch only made a version N) every example is scored by that model;
with --pinned, by the version pinned on the control topic (streamer model
pin). With --retrain the learner learns as it goes, as the live service
would, from the snapshot if one is given: the same input gives
byte-identical output. Its models are the replay's own, numbered on from
the snapshot's version and announced nowhere: they are not the service's
versions of those numbers, and --out-topic may not be the service's
predictions topic (kafka.topics.predictions). It never joins the live
consumer group and never commits offsets.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl.epochGiven = cmd.Flags().Changed("snapshot-epoch")
			return runReplay(cmd, fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.from, "from", "", "first offset or RFC 3339 time")
	f.StringVar(&fl.to, "to", "end", "offset or RFC 3339 time to stop before, or end")
	f.StringVar(&fl.partitions, "partitions", "", "comma-separated partitions of the examples topic (default all)")
	f.StringVar(&fl.snapshotFile, "snapshot", "", "pinned model: a snapshot file")
	f.Uint64Var(&fl.snapshotVersion, "snapshot-version", 0, "pinned model: this version from the history or snapshot topic")
	f.Uint64Var(&fl.snapshotEpoch, "snapshot-epoch", 0, "the epoch of --snapshot-version (default: the one epoch that made it)")
	f.BoolVar(&fl.pinned, "pinned", false, "pinned model: the version pinned on the control topic")
	f.BoolVar(&fl.retrain, "retrain", false, "learn as the live service would (from the snapshot, if given)")
	f.StringVar(&fl.outTopic, "out-topic", "", "write the predictions to this topic")
	f.StringVar(&fl.outFile, "out-file", "", "write the predictions to this JSONL file")
	fl.conf.register(f)
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

func runReplay(cmd *cobra.Command, fl replayFlags) error {
	if err := fl.check(); err != nil {
		return err
	}
	cfg, err := fl.conf.load()
	if err != nil {
		return err
	}
	if fl.retrain && fl.outTopic == cfg.Kafka.Topics.Predictions {
		return fmt.Errorf("--out-topic %s: --retrain makes models of its own, whose (epoch, version) would read as the service's on its predictions topic (kafka.topics.predictions): write to another topic or to --out-file", fl.outTopic)
	}
	rc, conn, err := replayConfig(cmd.Context(), cfg, fl)
	if err != nil {
		return err
	}
	defer conn.Close()
	if rc.Out, err = replayOutput(cmd.Context(), cfg, fl, conn); err != nil {
		return err
	}
	rc.Progress = progress(cmd.ErrOrStderr())
	sum, err := replay.Run(cmd.Context(), conn, rc)
	if err != nil {
		return err
	}
	printReplay(cmd.OutOrStdout(), sum)
	return nil
}

// replayOutput opens --out-file, JSON lines, or --out-topic, written in
// output.format: Avro under the predictions' schema, registered under the
// subject <topic>-value.
func replayOutput(ctx context.Context, cfg config.Config, fl replayFlags, conn *brokers.Connection) (replay.Output, error) {
	if fl.outFile != "" {
		out, err := replay.NewFileOutput(fl.outFile)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	var format publish.Format
	if cfg.Output.Format == config.FormatAvro {
		reg, err := schemaregistry.New(cfg.Registry())
		if err != nil {
			return nil, fmt.Errorf("schema_registry.%w", err)
		}
		if format, err = publish.AvroPredictions(ctx, reg, fl.outTopic); err != nil {
			return nil, fmt.Errorf("--out-topic %s: register the predictions' schema under %s: %w", fl.outTopic, publish.PredictionSubject(fl.outTopic), err)
		}
	}
	out, err := replay.NewTopicOutput(ctx, conn, fl.outTopic, cfg.Kafka.Partitions, format)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (fl replayFlags) check() error {
	pinned := 0
	if fl.snapshotFile != "" {
		pinned++
	}
	if fl.snapshotVersion != 0 {
		pinned++
	}
	if fl.pinned {
		pinned++
	}
	switch {
	case pinned > 1:
		return fmt.Errorf("give one of --snapshot, --snapshot-version and --pinned")
	case fl.epochGiven && fl.snapshotVersion == 0:
		return fmt.Errorf("--snapshot-epoch is the epoch of --snapshot-version: give both")
	case pinned == 0 && !fl.retrain:
		return fmt.Errorf("give --snapshot FILE, --snapshot-version N, --pinned or --retrain")
	case (fl.outTopic == "") == (fl.outFile == ""):
		return fmt.Errorf("give one of --out-topic and --out-file")
	}
	return nil
}

func replayConfig(ctx context.Context, cfg config.Config, fl replayFlags) (replay.Config, *brokers.Connection, error) {
	var rc replay.Config
	if err := cfg.CheckBrokers(false); err != nil {
		return rc, nil, fmt.Errorf("replay: %w", err)
	}
	bc := cfg.Brokers()
	var err error
	if rc.Pipeline, err = cfg.Pipeline(); err != nil {
		return rc, nil, err
	}
	if cfg.Input.Format == config.FormatAvro {
		if rc.Pipeline.Decoder.Avro, err = schemaregistry.New(cfg.Registry()); err != nil {
			return rc, nil, fmt.Errorf("schema_registry.%w", err)
		}
	}
	t := cfg.Kafka.Topics
	rc.Topics = replay.Topics{Examples: t.Examples, Labels: t.Labels, ExamplesDLQ: t.ExamplesDLQ, LabelsDLQ: t.LabelsDLQ}
	rc.Retrain = fl.retrain
	if rc.From, err = replay.ParseBound(fl.from, false); err != nil {
		return rc, nil, fmt.Errorf("--from: %w", err)
	}
	if rc.To, err = replay.ParseBound(fl.to, true); err != nil {
		return rc, nil, fmt.Errorf("--to: %w", err)
	}
	if rc.Partitions, err = parsePartitions(fl.partitions); err != nil {
		return rc, nil, err
	}
	conn, err := bc.Connect(bc.Brokers)
	if err != nil {
		return rc, nil, err
	}
	if rc.Snapshot, err = pinnedSnapshot(ctx, conn, cfg, fl); err != nil {
		conn.Close()
		return rc, nil, err
	}
	return rc, conn, nil
}

func pinnedSnapshot(ctx context.Context, conn *brokers.Connection, cfg config.Config, fl replayFlags) (*snapshot.Snapshot, error) {
	switch {
	case fl.snapshotFile != "":
		return snapshot.ReadFile(fl.snapshotFile)
	case fl.snapshotVersion != 0:
		sel := snapshot.AnyEpochVersion(fl.snapshotVersion)
		if fl.epochGiven {
			sel = snapshot.Exactly(snapshot.Stamp{Epoch: fl.snapshotEpoch, Version: fl.snapshotVersion})
		}
		st, err := conn.ResolveVersion(ctx, cfg.Model.Name, sel, cfg.Snapshot.HistoryTopic, cfg.Kafka.Topics.Snapshots)
		if errors.Is(err, brokers.ErrAmbiguousVersion) {
			return nil, fmt.Errorf("--snapshot-version: %w; name one with --snapshot-epoch", err)
		}
		if err != nil {
			return nil, fmt.Errorf("--snapshot-version: %w", err)
		}
		return snapshotVersion(ctx, conn, cfg, snapshot.Exactly(st))
	case fl.pinned:
		pins := control.NewFollower(conn, cfg.Kafka.Topics.Control, cfg.Model.Name, nil)
		if err := pins.CatchUp(ctx); err != nil {
			return nil, err
		}
		sel, pinned := pins.Current()
		if !pinned {
			return nil, fmt.Errorf("--pinned: model %q is not pinned on %s", cfg.Model.Name, cfg.Kafka.Topics.Control)
		}
		return snapshotVersion(ctx, conn, cfg, sel)
	}
	return nil, nil
}

// snapshotVersion returns the model's snapshot that sel names from the
// history topic, which keeps every version for its retention, or the
// snapshot topic, which keeps the newest.
func snapshotVersion(ctx context.Context, conn *brokers.Connection, cfg config.Config, sel snapshot.Selector) (*snapshot.Snapshot, error) {
	data, err := conn.FindSnapshotVersion(ctx, cfg.Model.Name, sel, cfg.Snapshot.HistoryTopic, cfg.Kafka.Topics.Snapshots)
	if err != nil {
		return nil, err
	}
	return snapshot.Decode(data)
}

func parsePartitions(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var ps []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 0 {
			return nil, fmt.Errorf("--partitions: %q is not a partition number", f)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// progress shows a progress bar on a terminal and plain lines otherwise.
func progress(w io.Writer) func(done, total int64) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		var bar *progressbar.ProgressBar
		return func(done, total int64) {
			if bar == nil {
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("replay"),
					progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("records"),
					progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond))
			}
			_ = bar.Set64(done)
		}
	}
	start, last := time.Now(), time.Time{}
	return func(done, total int64) {
		if time.Since(last) < 5*time.Second && done < total {
			return
		}
		last = time.Now()
		rate := float64(done) / max(time.Since(start).Seconds(), 1e-9)
		eta := "?"
		if rate > 0 {
			eta = (time.Duration(float64(total-done)/rate) * time.Second).String()
		}
		fmt.Fprintf(w, "replay: %d/%d records, %.0f records/s, eta %s\n", done, total, rate, eta)
	}
}

func printReplay(w io.Writer, s replay.Summary) {
	state := "done"
	if s.Interrupted {
		state = "interrupted"
	}
	fmt.Fprintf(w, "replay %s: %d records, %d predictions, %d bad, %.1fs, %.0f records/s, model version %d\n",
		state, s.Records, s.Predictions, s.BadRecords, s.Seconds, s.RecordsPerSecond, s.ModelVersion)
	if s.Accuracy != nil {
		fmt.Fprintf(w, "accuracy on %d labeled records: %.4f\n", s.Labeled, *s.Accuracy)
	}
	for _, r := range s.Ranges {
		fmt.Fprintf(w, "partition %d: [%d, %d), reached %d\n", r.Partition, r.From, r.To, max(r.From, s.Reached[r.Partition]))
	}
}
