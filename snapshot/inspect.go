package snapshot

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Summarize writes a human-readable summary of s.
func Summarize(w io.Writer, s *Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := s.Params
	lines := []string{
		fmt.Sprintf("model\t%s", s.Name),
		fmt.Sprintf("version\t%d", s.Version),
		fmt.Sprintf("epoch\t%d", s.Epoch),
		fmt.Sprintf("created\t%s", s.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00")),
		fmt.Sprintf("classes\t%s", strings.Join(s.Model.Classes, ", ")),
		fmt.Sprintf("features\tdim %d (dense %d), signed %v, normalize %v", s.Features.Dim, s.Features.DenseDim, s.Features.Signed, s.Features.Normalize),
		fmt.Sprintf("algorithm\t%s λ=%g λ_u=%g λ_I=%g r=%g", p.Algorithm, p.Lambda, p.LambdaU, p.LambdaI, p.R),
		fmt.Sprintf("window\t%d examples, max age %s, k=%d, %s Laplacian (p=%d), %s weights",
			s.Window.MaxExamples, s.Window.MaxAge, s.Window.K, s.Window.Laplacian, s.Window.Degree, s.Window.Weights),
		fmt.Sprintf("stats\t%d examples, %d labels, %d predictions, %d solves, window %d (%d labeled), objective %.6g",
			s.Stats.Examples, s.Stats.Labels, s.Stats.Predictions, s.Stats.Solves, s.Stats.WindowSize, s.Stats.Labeled, s.Stats.Objective),
	}
	for k, prob := range s.Model.Problems {
		nnz := 0
		for _, x := range prob.W {
			if x != 0 {
				nnz++
			}
		}
		name := fmt.Sprintf("problem %d", k)
		if k < len(s.Model.Classes) && !s.Model.Binary() {
			name = "class " + s.Model.Classes[k]
		} else if s.Model.Binary() {
			name = fmt.Sprintf("%s vs %s", s.Model.Classes[1], s.Model.Classes[0])
		}
		lines = append(lines, fmt.Sprintf("%s\t%d non-zero weights, bias %.6g", name, nnz, prob.W[len(prob.W)-1]))
	}
	for _, o := range s.Offsets {
		lines = append(lines, fmt.Sprintf("offset\t%s[%d] window start %d, next %d", o.Topic, o.Partition, o.WindowStart, o.Next))
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(tw, l); err != nil {
			return err
		}
	}
	return tw.Flush()
}
