package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"streamer/ingest"
	"streamer/offline"
)

func newEvalCommand() *cobra.Command {
	var (
		cfg          offline.EvalConfig
		conf         configFlags
		plot, report string
		horizon      int
		curveStep    int
		unlabeled    string
		cpuProfile   string
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure prequential accuracy on a recorded stream, without Kafka",
		Long: `eval replays a recorded stream (JSONL in the example schema, .jsonl or
.jsonl.gz, or LIBSVM) through the service's core loop. Each example is
scored when it arrives; its true label is revealed with probability
--label-rate, --label-delay examples later; re-solves run when due. The
learner is configured like the service (--config, --set), and runs beside
the same learner with the unlabeled data ignored (supervised only), on the
same labels.

For both learners it prints one JSON line:
  accuracy, macro_f1          prequential: the revealed labels against the
                              predictions made when their examples arrived
                              (those made before any model are left out and
                              counted in unscored)
  all_accuracy, all_macro_f1  every example's prediction at arrival against
                              the label its file carries, revealed or not;
                              an example that arrived before any model
                              existed counts as wrong (counted in no_model)
  test_accuracy, test_macro_f1  with --test FILE: the model in force at the
                              end of the stream on that labeled file (no
                              model: every row wrong); --test-every N also
                              scores the model in force every N examples
                              (test_curve in --report, a chart in --plot)
  review                      with --review-precision P: predictions go to
                              review below thresholds chosen for precision
                              P (as review.target_precision does); decided
                              is the share of examples decided without
                              review, precision how often those were right
                              against the file's labels (over --seeds, of
                              every seed's decided predictions together),
                              routed the count sent to review; classes the
                              counts by class predicted (decided, right,
                              routed; over --seeds, their sums); --plot
                              adds their coverage and precision curve

--seeds N runs the label seeds 1..N one after the other: each figure is
then the mean over the seeds, ssl_std and supervised_std their sample
standard deviations, gain (semi-supervised minus supervised, seed by seed)
with gain_std, and per_seed every run's figures. A progress bar shows on a
terminal, a line every 5 seconds otherwise (--quiet: neither).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := conf.load()
			if err != nil {
				return err
			}
			if cfg.Pipeline, err = sc.Pipeline(); err != nil {
				return err
			}
			if cfg.Pipeline.Decoder.Unlabeled, err = ingest.ParseUnlabeledLabel(unlabeled); err != nil {
				return fmt.Errorf("--unlabeled-label: %w", err)
			}
			if cfg.ReviewPrecision < 0 || cfg.ReviewPrecision >= 1 {
				return fmt.Errorf("--review-precision must be in [0, 1), got %v", cfg.ReviewPrecision)
			}
			if cfg.TestEvery < 0 || cfg.Seeds < 0 {
				return fmt.Errorf("--test-every and --seeds must not be negative")
			}
			if (cfg.CompareRandom || cfg.AskOnAlarm) && !cfg.Active {
				return fmt.Errorf("--compare-random and --ask-on-alarm need --active")
			}
			if cfg.TestEvery > 0 && cfg.Test == "" {
				return fmt.Errorf("--test-every needs --test FILE")
			}
			cfg.Pipeline.Horizon, cfg.Pipeline.CurveStep = horizon, curveStep
			if !quiet {
				cfg.Progress = evalProgress(cmd.ErrOrStderr())
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			rep, err := offline.Eval(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if plot != "" {
				if err := writePlot(plot, rep); err != nil {
					return err
				}
			}
			if err := writeReport(cmd.OutOrStdout(), "", rep.WithoutCurves()); err != nil {
				return err
			}
			return writeReport(io.Discard, report, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", "", "recorded stream: JSONL in the example schema (.jsonl or .jsonl.gz) or LIBSVM")
	f.Float64Var(&cfg.LabelRate, "label-rate", 0.05, "probability that an example's label is revealed")
	f.IntVar(&cfg.LabelDelay, "label-delay", 100, "examples after which a revealed label arrives")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the labels revealed (one run)")
	f.IntVar(&cfg.Seeds, "seeds", 0, "run the label seeds 1..N and report mean and standard deviation (overrides --seed)")
	f.StringVar(&cfg.Test, "test", "", "labeled file, in the format of --data, to score the final models on")
	f.IntVar(&cfg.TestEvery, "test-every", 0, "also score the models in force on --test every N examples")
	f.Float64Var(&cfg.ReviewPrecision, "review-precision", 0, "route predictions to review for this target precision, and score the routing")
	f.StringVar(&report, "report", "", "write the report, with the curves, as JSON to this file")
	f.StringVar(&plot, "plot", "", "draw the accuracy curves (and the test curves) to this SVG file")
	f.IntVar(&horizon, "horizon", 100, "labels covered by the recent accuracy")
	f.IntVar(&curveStep, "curve-step", 10, "labels between two points of the curves")
	f.BoolVar(&quiet, "quiet", false, "no progress bar or progress lines")
	f.BoolVar(&cfg.Active, "active", false, "reveal the labels the learner requests (active.*), as many as --label-rate would reveal, each --label-delay examples after its request")
	f.BoolVar(&cfg.CompareRandom, "compare-random", false, "with --active, also run the random reveals of every seed and report both")
	f.BoolVar(&cfg.AskOnAlarm, "ask-on-alarm", false, "with --active, let a drift alarm without labels raise the budget as drift.react's ask says (more labels than --label-rate)")
	addUnlabeledLabelFlag(f, &unlabeled)
	conf.register(f)
	// For profiling the learner; not part of the command's interface.
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	_ = f.MarkHidden("cpuprofile")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

func writePlot(path string, rep offline.EvalReport) error {
	title := fmt.Sprintf("Accuracy (%s vs supervised only), %d labels revealed of %d", rep.Algorithm, rep.LabelsRevealed, rep.Examples)
	if err := writeFile(path, func(w io.Writer) error { return offline.WriteEvalPlot(w, title, rep) }); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// evalProgress shows a progress bar over every seed's run on a terminal,
// and a line every 5 seconds otherwise.
func evalProgress(w io.Writer) func(offline.EvalProgress) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return evalBar(w)
	}
	start, last := time.Now(), time.Now()
	return func(p offline.EvalProgress) {
		done, total := evalDone(p)
		if time.Since(last) < 5*time.Second && done < total {
			return
		}
		last = time.Now()
		rate := float64(done) / max(time.Since(start).Seconds(), 1e-9)
		eta := "?"
		if rate > 0 {
			eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
		}
		if p.Runs > 1 {
			eta += " (all seeds)"
		}
		fmt.Fprintf(w, "eval: seed %d (%d of %d), %d/%d examples, %.1f examples/s, eta %s, model version %d, %d solves\n",
			p.Seed, p.Run, p.Runs, p.Examples, p.Total, rate, eta, p.ModelVersion, p.Solves)
	}
}

// evalBar is the terminal's progress bar, as replay draws it; the
// description carries the seed, the model version and the solves.
func evalBar(w io.Writer) func(offline.EvalProgress) {
	var bar *progressbar.ProgressBar
	var version uint64
	return func(p offline.EvalProgress) {
		done, total := evalDone(p)
		if bar == nil {
			bar = progressbar.NewOptions64(int64(total), progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("eval"),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("examples"),
				progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		}
		if p.ModelVersion != version || p.Examples == 1 {
			version = p.ModelVersion
			bar.Describe(fmt.Sprintf("eval seed %d/%d, model v%d, %d solves", p.Run, p.Runs, p.ModelVersion, p.Solves))
		}
		_ = bar.Set64(int64(done))
	}
}

// evalDone returns the examples done and to do over every run.
func evalDone(p offline.EvalProgress) (done, total int) {
	return (p.Run-1)*p.Total + p.Examples, p.Runs * p.Total
}
