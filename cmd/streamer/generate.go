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
	cmd.AddCommand(newGenerateClustersCommand(), newGenerateGlyphsCommand())
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
