package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"streamer/synth"
	"streamer/vector"
)

func newGenerateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write a generated multi-class stream (JSONL) to try eval and fit on",
		Long: `generate writes seeded multi-class data as a recorded stream: JSONL in the
example schema, one {"id", "label", "vector"} a line, every label present
(eval reveals a fraction of them). The multi-class stream figures of
docs/RESULTS.md were measured on these.`,
	}
	cmd.AddCommand(newGenerateClustersCommand(), newGenerateGlyphsCommand(), newGenerateDriftCommand())
	return cmd
}

func newGenerateClustersCommand() *cobra.Command {
	var (
		cfg               synth.ClusterConfig
		classes, perClass int
		out               string
	)
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "Gaussian clusters, a class per cluster or several",
		Long: `clusters draws --rows points of --dim values from classes × per-class
isotropic Gaussian clusters whose centres are standard normal, with
--spread the clusters' standard deviation; cluster j is of class
c<j mod classes>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if classes < 2 || perClass < 1 || cfg.Points < 1 || cfg.Dim < 1 || !(cfg.Spread > 0) {
				return fmt.Errorf("want --classes >= 2, --per-class >= 1, --rows and --dim >= 1, --spread > 0")
			}
			cfg.Clusters = classes * perClass
			xs, cs := synth.Clusters(cfg)
			return writeStream(cmd, out, xs, func(i int) string { return fmt.Sprintf("c%d", cs[i]%classes) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Points, "rows", 1800, "examples")
	f.IntVar(&cfg.Dim, "dim", 64, "values per example")
	f.IntVar(&classes, "classes", 10, "classes")
	f.IntVar(&perClass, "per-class", 1, "clusters per class")
	f.Float64Var(&cfg.Spread, "spread", 0.8, "standard deviation of a cluster (its centre's coordinates have 1)")
	f.Uint64Var(&cfg.Seed, "seed", 7, "generator seed")
	f.StringVar(&out, "out", "", "write here instead of standard output")
	return cmd
}

func newGenerateGlyphsCommand() *cobra.Command {
	var (
		cfg synth.GlyphConfig
		out string
	)
	cmd := &cobra.Command{
		Use:   "glyphs",
		Short: "8 × 8 images of ten digit-like glyphs, deformed at random",
		Long: `glyphs draws --rows 8 × 8 images (64 intensities, 0 to 16) of ten
digit-like glyphs, each rotated, scaled, sheared, shifted and jittered at
random by --deform, with a pen of random width: classes on curved
manifolds, as in images of handwriting. Labels are g0 to g9.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Images < 1 || !(cfg.Deform > 0) {
				return fmt.Errorf("want --rows >= 1 and --deform > 0")
			}
			xs, cs := synth.Glyphs(cfg)
			return writeStream(cmd, out, xs, func(i int) string { return fmt.Sprintf("g%d", cs[i]) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Images, "rows", 1800, "examples")
	f.Float64Var(&cfg.Deform, "deform", 0.8, "scale of the random deformations")
	f.Uint64Var(&cfg.Seed, "seed", 11, "generator seed")
	f.StringVar(&out, "out", "", "write here instead of standard output")
	return cmd
}

func newGenerateDriftCommand() *cobra.Command {
	var (
		cfg  synth.DriftConfig
		kind string
		out  string
	)
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "A stream with a known change: a turning boundary, swapped labels, a new class, moved inputs",
		Long: `drift draws a stream whose concept changes at a known row (--change, a
fraction of --rows), to measure how soon drift is noticed and how well the
service recovers:

  rotate    two classes in --dim dense features; their boundary turns
            through --degrees from --change (default: the first row) to
            the end. The classes are two unit Gaussians whose means sit
            ±1.645 from the boundary (Bayes rate 95%), or, with --noise p,
            one standard Gaussian labelled by the side of the boundary,
            each label flipped with probability p (Bayes rate 1 − p).
  swap      glyph images (generate glyphs) of ten classes; from --change
            on, g1 and g7, and g3 and g8, swap their labels.
  newclass  glyph images of nine classes; g9 appears from --change on.
  shift     two classes in --dim dense features labelled by the side of a
            fixed boundary, each label flipped with probability --noise
            (0.05 unless set); from --change on, the inputs move by
            --shift standard deviations, half along the boundary's normal
            and half across it.

The first row after the change is printed on standard error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Kind = synth.DriftKind(kind)
			d, err := synth.DriftStream(cfg)
			if err != nil {
				return fmt.Errorf("generate drift: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "change at row %d\n", d.Change)
			return writeStream(cmd, out, d.Rows, func(i int) string { return d.Labels[i] })
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", "", "rotate, swap, newclass or shift")
	f.IntVar(&cfg.Rows, "rows", 20000, "examples")
	f.Float64Var(&cfg.Change, "change", 0, "fraction of the stream before the change; 0 is 0.5 (rotate: the first row)")
	f.IntVar(&cfg.Dim, "dim", 20, "values per example (rotate, shift)")
	f.Float64Var(&cfg.Degrees, "degrees", 360, "angle the boundary turns through (rotate)")
	f.Float64Var(&cfg.Noise, "noise", 0, "probability that a label is flipped (rotate, shift); see above")
	f.Float64Var(&cfg.Separation, "separation", 0, "with --noise: two unit Gaussians whose means sit this far from the boundary (rotate, shift)")
	f.Float64Var(&cfg.Shift, "shift", 2, "how far the inputs move, in standard deviations (shift)")
	f.Float64Var(&cfg.Deform, "deform", 0.8, "scale of the glyphs' random deformations (swap, newclass)")
	f.Uint64Var(&cfg.Seed, "seed", 13, "generator seed")
	f.StringVar(&out, "out", "", "write here instead of standard output")
	_ = cmd.MarkFlagRequired("kind")
	return cmd
}

// streamLine is one generated example, in the example schema.
type streamLine struct {
	ID     string    `json:"id"`
	Label  string    `json:"label"`
	Vector []float64 `json:"vector"`
}

// writeStream writes the rows with their labels as JSONL, to the file out
// or, when out is empty, to the command's output.
func writeStream(cmd *cobra.Command, out string, xs []vector.Vector, label func(int) string) error {
	if out == "" {
		return encodeStream(cmd.OutOrStdout(), xs, label)
	}
	if err := writeFile(out, func(w io.Writer) error { return encodeStream(w, xs, label) }); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	return nil
}

func encodeStream(w io.Writer, xs []vector.Vector, label func(int) string) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i, x := range xs {
		if err := enc.Encode(streamLine{ID: fmt.Sprint(i), Label: label(i), Vector: x.Values}); err != nil {
			return err
		}
	}
	return bw.Flush()
}
