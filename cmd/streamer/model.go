package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"streamer/brokers"
	"streamer/config"
	"streamer/control"
	"streamer/snapshot"
)

func newModelCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "List a model's versions, pin one to score with, unpin",
		Long: `model reads the configured model's history (every version announced on
kafka.topics.versions, the snapshots of snapshot.history_topic and the
newest on kafka.topics.snapshots) and writes pin orders to the control
topic (kafka.topics.control), which every service of the model obeys:
pinned, it scores with that version (loading it from the history: a
rollback) while it goes on learning and publishing newer ones; unpinned,
the newest model scores again.`,
	}
	cmd.AddCommand(newModelListCommand(), newModelPinCommand(), newModelUnpinCommand())
	return cmd
}

func newModelListCommand() *cobra.Command {
	var (
		conf     configFlags
		jsonRows bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the versions of the model, oldest first",
		Long: `list prints a row per version of the configured model: every version
announced on the versions topic (each model is announced before it scores,
so every (epoch, version) a prediction carries is there, for the topic's
retention), and every snapshot on the history and snapshot topics. A row
says when the model was made, by what algorithm, on what window (rows,
labeled), how it came by its stamp (a solve, a restore under a learner's
new epoch, the seed model), and whether a snapshot of it is kept: only
those can be pinned. A snapshot adds the stream's counts up to it and the
prequential accuracy of the stream's predictions up to then (over every
scored label, and over the last eval.horizon). The pinned version, if
any, is marked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, conn, err := connectModel(&conf)
			if err != nil {
				return err
			}
			defer conn.Close()
			rows, err := modelVersions(cmd.Context(), conn, cfg)
			if err != nil {
				return err
			}
			if jsonRows {
				return printVersionsJSON(cmd.OutOrStdout(), rows)
			}
			return printVersions(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&jsonRows, "json", false, "print one JSON object per version instead of a table")
	conf.register(cmd.Flags())
	return cmd
}

func newModelPinCommand() *cobra.Command {
	var (
		conf    configFlags
		version uint64
		epoch   uint64
	)
	cmd := &cobra.Command{
		Use:   "pin --version N [--epoch E]",
		Short: "Make every service of the model score with version N (of epoch E)",
		Long: `pin writes the order to score with version N of epoch E to the control
topic. A snapshot of the version must be on the history or snapshot topic,
where the services load it from: a version announced only (streamer model
list shows no snapshot of it) cannot be put back in force. Without
--epoch, the version must have been made under one epoch only (two
learners' terms can both have made a version N: pin then lists their
epochs and pins neither).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if version == 0 {
				return fmt.Errorf("--version: give a version, from 1")
			}
			cfg, conn, err := connectModel(&conf)
			if err != nil {
				return err
			}
			defer conn.Close()
			sel := snapshot.AnyEpochVersion(version)
			if cmd.Flags().Changed("epoch") {
				sel = snapshot.Exactly(snapshot.Stamp{Epoch: epoch, Version: version})
			}
			t := cfg.Kafka.Topics
			st, err := conn.ResolveVersion(cmd.Context(), cfg.Model.Name, sel, cfg.Snapshot.HistoryTopic, t.Snapshots)
			if errors.Is(err, brokers.ErrAmbiguousVersion) {
				return fmt.Errorf("not pinned: %w; name one with --epoch", err)
			}
			if errors.Is(err, brokers.ErrNoSnapshot) {
				if a, ok := announcedOnly(cmd.Context(), conn, cfg, sel); ok {
					return fmt.Errorf("not pinned: version %d of epoch %d (made %s by %s on a window of %d, %d labeled) has no snapshot: "+
						"its weights were not kept, and only a snapshot can be put back in force; streamer model list shows "+
						"the versions that have one (snapshot.every_solves and snapshot.every say how often one is kept)",
						a.Version, a.Epoch, a.CreatedAt.UTC().Format(time.RFC3339), a.Algorithm, a.Window, a.Labeled)
				}
			}
			if err != nil {
				return fmt.Errorf("not pinned: %w", err)
			}
			if err := control.Write(cmd.Context(), conn, t.Control, control.PinStamp(cfg.Model.Name, st)); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "model %s pinned to version %d of epoch %d\n", cfg.Model.Name, st.Version, st.Epoch)
			return nil
		},
	}
	cmd.Flags().Uint64Var(&version, "version", 0, "the version to pin (streamer model list shows them)")
	cmd.Flags().Uint64Var(&epoch, "epoch", 0, "the epoch of the version (default: the one epoch that made it)")
	conf.register(cmd.Flags())
	return cmd
}

func newModelUnpinCommand() *cobra.Command {
	var conf configFlags
	cmd := &cobra.Command{
		Use:   "unpin",
		Short: "Let every service of the model score with the newest version again",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, conn, err := connectModel(&conf)
			if err != nil {
				return err
			}
			defer conn.Close()
			p := control.Pin{Model: cfg.Model.Name, At: time.Now().UTC()}
			if err := control.Write(cmd.Context(), conn, cfg.Kafka.Topics.Control, p); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "model %s unpinned\n", cfg.Model.Name)
			return nil
		},
	}
	conf.register(cmd.Flags())
	return cmd
}

// connectModel loads the configuration and connects to its cluster, which
// must be a running one.
func connectModel(conf *configFlags) (config.Config, *brokers.Connection, error) {
	cfg, err := conf.load()
	if err != nil {
		return cfg, nil, err
	}
	if err := cfg.CheckBrokers(false); err != nil {
		return cfg, nil, fmt.Errorf("model: %w", err)
	}
	bc := cfg.Brokers()
	conn, err := bc.Connect(bc.Brokers)
	return cfg, conn, err
}

// versionRow is a line of `model list`.
type versionRow struct {
	snapshot.Known
	Pinned bool `json:"pinned,omitempty"`
}

// announcements returns the announcements of the configured model; none
// when the versions topic does not exist.
func announcements(ctx context.Context, conn *brokers.Connection, cfg config.Config) ([]snapshot.Announcement, error) {
	var out []snapshot.Announcement
	_, err := conn.ReadAnnouncements(ctx, cfg.Kafka.Topics.Versions, cfg.Model.Name, func(a snapshot.Announcement) { out = append(out, a) })
	if err != nil && !errors.Is(err, brokers.ErrUnknownTopic) {
		return nil, err
	}
	return out, nil
}

// announcedOnly returns the newest announcement that sel names, of a
// version that pin found no snapshot of.
func announcedOnly(ctx context.Context, conn *brokers.Connection, cfg config.Config, sel snapshot.Selector) (snapshot.Announcement, bool) {
	all, err := announcements(ctx, conn, cfg)
	var found snapshot.Announcement
	ok := false
	for _, a := range all {
		if err == nil && sel.Matches(a.Stamp()) && (!ok || a.Epoch >= found.Epoch) {
			found, ok = a, true
		}
	}
	return found, ok
}

// modelVersions returns the versions of the configured model, the pinned
// one marked.
func modelVersions(ctx context.Context, conn *brokers.Connection, cfg config.Config) ([]versionRow, error) {
	entries, _, err := conn.SnapshotHistory(ctx, cfg.Model.Name, cfg.Snapshot.HistoryTopic, cfg.Kafka.Topics.Snapshots)
	if err != nil {
		return nil, err
	}
	announced, err := announcements(ctx, conn, cfg)
	if err != nil {
		return nil, err
	}
	pins := control.NewFollower(conn, cfg.Kafka.Topics.Control, cfg.Model.Name, nil)
	if err := pins.CatchUp(ctx); err != nil {
		return nil, err
	}
	pinned, isPinned := pins.Current()
	known := snapshot.Versions(entries, announced)
	rows := make([]versionRow, len(known))
	marked := -1
	for i, k := range known {
		rows[i] = versionRow{Known: k}
		if isPinned && k.Snapshot && pinned.Matches(k.Stamp()) {
			marked = i // rows go by epoch: an order of any epoch loads the newest
		}
	}
	if marked >= 0 {
		rows[marked].Pinned = true
	}
	return rows, nil
}

func printVersionsJSON(w io.Writer, rows []versionRow) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// printVersions prints rows as a table. A version without a snapshot
// shows "-" for what only a snapshot knows (the stream's counts, the
// accuracy, the bytes) and "no" under SNAPSHOT: it cannot be pinned.
func printVersions(w io.Writer, rows []versionRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EPOCH\tVERSION\tCREATED\tORIGIN\tALGORITHM\tWINDOW\tLABELED\tEXAMPLES\tLABELS\tACCURACY\tRECENT\tBYTES\tSNAPSHOT\tPINNED")
	for _, r := range rows {
		pinned := ""
		if r.Pinned {
			pinned = "pinned"
		}
		examples, labels, size, snap := "-", "-", "-", "no"
		accuracy, recent := "-", "-" // no label scored a prediction yet, or no snapshot says
		if r.Snapshot {
			examples, labels, size, snap = strconv.FormatInt(r.Examples, 10), strconv.FormatInt(r.Labels, 10), strconv.Itoa(r.Bytes), "yes"
		}
		if r.Snapshot && r.Scored > 0 {
			accuracy, recent = fmt.Sprintf("%.4f", r.Accuracy), fmt.Sprintf("%.4f", r.RecentAccuracy)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Epoch, r.Version, r.CreatedAt.UTC().Format(time.RFC3339),
			origin(r.Known), cmp.Or(r.Algorithm, "-"), r.Window, r.Labeled, examples, labels, accuracy, recent, size, snap, pinned)
	}
	return tw.Flush()
}

// origin says how a listed version came by its stamp: "-" when it was not
// announced (a snapshot older than announcements, or one whose
// announcement retention deleted).
func origin(k snapshot.Known) string {
	switch {
	case !k.Announced:
		return "-"
	case k.From != nil:
		return fmt.Sprintf("%s(%v)", k.Origin, *k.From)
	}
	return k.Origin
}
