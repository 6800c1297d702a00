package snapshot

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"streamer/online/model"
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
	lines = append(lines, modelLines(&s.Model)...)
	lines = append(lines, reviewLines(s)...)
	lines = append(lines, driftLines(s)...)
	if s.Progress != nil && len(s.Progress.Unlabeled) > 0 {
		lines = append(lines, fmt.Sprintf("forgotten\t%d labels of window rows, forgotten at drift alarms", len(s.Progress.Unlabeled)))
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

// modelLines describes the model's map and its problems: a problem a class
// (or one for two classes), or, for Spectral Regression, the responses
// that embed the rows, whose nearest class centroid classifies them.
func modelLines(m *model.Model) []string {
	var lines []string
	if km := m.Map; km != nil {
		lines = append(lines, fmt.Sprintf("kernel\trbf γ=%.6g over %d landmarks, rank %d", km.Gamma, len(km.Landmarks), km.Rank))
	}
	if m.Centroids != nil {
		lines = append(lines, fmt.Sprintf("embedding\t%d responses (Spectral Regression), nearest of %d class centroids", len(m.Problems), centroidCount(m.Centroids)))
	}
	for k, prob := range m.Problems {
		nnz := 0
		for _, x := range prob.W {
			if x != 0 {
				nnz++
			}
		}
		var name string
		switch {
		case m.Centroids != nil:
			name = fmt.Sprintf("response %d", k)
		case m.Binary():
			name = fmt.Sprintf("%s vs %s", m.Classes[1], m.Classes[0])
		case k < len(m.Classes):
			name = "class " + m.Classes[k]
		default:
			name = fmt.Sprintf("problem %d", k)
		}
		lines = append(lines, fmt.Sprintf("%s\t%d non-zero weights, bias %.6g", name, nnz, prob.W[len(prob.W)-1]))
	}
	return lines
}

// centroidCount counts the classes that have a centroid.
func centroidCount(centroids [][]float64) int {
	n := 0
	for _, c := range centroids {
		if c != nil {
			n++
		}
	}
	return n
}

// reviewLines says which predictions of each class go to review (those
// below its probability threshold: all, none or below a value), the
// precision the thresholds were chosen for, and how many graded
// predictions the next thresholds will be chosen on.
func reviewLines(s *Snapshot) []string {
	var graded []string
	if s.Progress != nil && s.Progress.ReviewGrades != nil {
		g := s.Progress.ReviewGrades
		graded = []string{fmt.Sprintf("graded\t%d predictions graded by their labels (%d right), on which the next thresholds are chosen",
			len(g.Class), strings.Count(g.Correct, "1"))}
	}
	if s.ReviewThresholds == nil {
		return append([]string{"review\tno thresholds"}, graded...)
	}
	parts := make([]string, len(s.ReviewThresholds))
	for c, t := range s.ReviewThresholds {
		name := fmt.Sprint(c)
		if c < len(s.Model.Classes) {
			name = s.Model.Classes[c]
		}
		switch {
		case math.IsInf(t, 1):
			parts[c] = name + " all"
		case t == 0:
			parts[c] = name + " none"
		default:
			parts[c] = fmt.Sprintf("%s below %.3g", name, t)
		}
	}
	return append([]string{fmt.Sprintf("review\tpredictions sent to review, for precision %g: %s", s.ReviewTargetPrecision, strings.Join(parts, ", "))}, graded...)
}
