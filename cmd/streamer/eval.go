package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"streamer/offline"
)

func newEvalCommand() *cobra.Command {
	var (
		cfg          offline.EvalConfig
		conf         configFlags
		plot, report string
		horizon      int
		curveStep    int
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure prequential accuracy on a recorded stream, without Kafka",
		Long: `eval replays a recorded stream (JSONL in the example schema, .jsonl or
.jsonl.gz) through the service's core loop. Each example is scored when it
arrives; its true label is revealed with probability --label-rate,
--label-delay examples later; re-solves run when due. It prints the
prequential accuracy and macro-F1 of the semi-supervised learner and of the
same learner with the unlabeled data ignored, on the same labels. The
learner is configured like the service (--config, --set).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := conf.load()
			if err != nil {
				return err
			}
			if cfg.Pipeline, err = sc.Pipeline(); err != nil {
				return err
			}
			cfg.Pipeline.Horizon, cfg.Pipeline.CurveStep = horizon, curveStep
			rep, err := offline.Eval(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if plot != "" {
				if err := writePlot(plot, rep); err != nil {
					return err
				}
			}
			curve, base := rep.Curve, rep.BaselineCurve
			rep.Curve, rep.BaselineCurve = nil, nil
			if err := writeReport(cmd.OutOrStdout(), "", rep); err != nil {
				return err
			}
			rep.Curve, rep.BaselineCurve = curve, base
			return writeReport(io.Discard, report, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", "", "recorded stream, JSONL in the example schema (.jsonl or .jsonl.gz)")
	f.Float64Var(&cfg.LabelRate, "label-rate", 0.05, "probability that an example's label is revealed")
	f.IntVar(&cfg.LabelDelay, "label-delay", 100, "examples after which a revealed label arrives")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the labels revealed")
	f.StringVar(&report, "report", "", "write the report, with the curves, as JSON to this file")
	f.StringVar(&plot, "plot", "", "draw both accuracy curves to this SVG file")
	f.IntVar(&horizon, "horizon", 100, "labels covered by the recent accuracy")
	f.IntVar(&curveStep, "curve-step", 10, "labels between two points of the curves")
	conf.register(f)
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

func writePlot(path string, rep offline.EvalReport) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	title := fmt.Sprintf("Prequential accuracy (%s vs supervised only), %d labels revealed of %d", rep.Algorithm, rep.LabelsRevealed, rep.Examples)
	if err := offline.WritePlot(f, title, rep.Curve, rep.BaselineCurve); err != nil {
		f.Close()
		return fmt.Errorf("plot: %w", err)
	}
	return f.Close()
}
