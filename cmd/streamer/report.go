package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"streamer/online/train"
)

// writeFile creates the file at path, has write fill it, and closes it;
// the file is closed whether write fails or not, and an error names path.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err // *PathError: names path
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeReport prints v as one JSON line and, when path is set, writes it
// (indented) to that file too.
func writeReport(w io.Writer, path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if _, err := fmt.Fprintln(w, string(line)); err != nil {
		return err
	}
	if path == "" {
		return nil
	}
	pretty, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(pretty, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// addParamFlags binds the solver's hyper-parameters to flags.
func addParamFlags(f *pflag.FlagSet, p *train.Params) {
	f.Float64Var(&p.Lambda, "lambda", 1e-3, "λ, weight of the regularizer ‖w‖²/2")
	f.Float64Var(&p.LambdaU, "lambda-u", 1, "λ_u, weight of the unlabeled loss (tsvm, da)")
	f.Float64Var(&p.LambdaI, "lambda-i", 0, "λ_I, weight of the graph term (laprls, lapsvm; tsvm and da when > 0)")
	f.Float64Var(&p.R, "r", 0, "fraction of unlabeled rows in the positive class (tsvm, da): the larger of two numeric labels, 1 of 1/-1, else the class seen second; 0 estimates it from the labeled rows")
	f.IntVar(&p.MaxSwitch, "max-switch", 0, "S, most label pairs TSVM switches per round; 0 means u/2")
	f.Float64Var(&p.PositiveCost, "cost-pos", 1, "cost of labeled positive rows (binary problems)")
	f.Float64Var(&p.NegativeCost, "cost-neg", 1, "cost of labeled negative rows (binary problems)")
	f.Float64Var(&p.Spectral.Delta, "sr-delta", 0.05, "δ of sr: weight of the kNN edges against the label block, in (0, 1]")
	f.IntVar(&p.Spectral.Neighbours, "sr-k", 5, "p of sr: its graph joins two rows when either is among the other's p nearest of the kNN graph's (--knn) neighbours")
	f.Float64Var(&p.Spectral.Gamma, "sr-gamma", 1, "γ of sr: weight of unlabeled rows in its ridge regressions, in (0, 1]; λ is the ridge α")
}

// runChildBench runs a benchmark that starts this executable as its child
// processes (the path goes to *exe first) and writes its report.
func runChildBench(cmd *cobra.Command, exe *string, path string, run func(context.Context) (any, error)) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("this executable's path: %w", err)
	}
	*exe = self
	rep, err := run(cmd.Context())
	if err != nil {
		return err
	}
	return writeReport(cmd.OutOrStdout(), path, rep)
}
