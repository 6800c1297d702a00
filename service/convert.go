package service

import (
	"streamer/pipeline"
	"streamer/snapshot"
)

// snapshotProgress converts the pipeline's progress for a snapshot.
func snapshotProgress(pr pipeline.Progress) *snapshot.Progress {
	out := &snapshot.Progress{Solved: pr.Solved, Prequential: snapshotPrequential(pr.SSL)}
	if pr.Baseline != nil {
		base := snapshotPrequential(*pr.Baseline)
		out.Baseline = &base
	}
	return out
}

func snapshotPrequential(st pipeline.PrequentialState) snapshot.Prequential {
	out := snapshot.Prequential{
		Correct: st.Correct, Total: st.Total, TruePositives: st.TP, FalsePositives: st.FP, FalseNegatives: st.FN,
		Recent: st.Recent, Unscored: st.Unscored, Examples: st.Examples,
	}
	for _, c := range st.Curve {
		out.Curve = append(out.Curve, snapshot.CurvePoint(c))
	}
	return out
}

// pipelineProgress converts a snapshot's progress back.
func pipelineProgress(pr *snapshot.Progress) pipeline.Progress {
	out := pipeline.Progress{Solved: pr.Solved, SSL: pipelinePrequential(pr.Prequential)}
	if pr.Baseline != nil {
		base := pipelinePrequential(*pr.Baseline)
		out.Baseline = &base
	}
	return out
}

func pipelinePrequential(st snapshot.Prequential) pipeline.PrequentialState {
	out := pipeline.PrequentialState{
		Correct: st.Correct, Total: st.Total, TP: st.TruePositives, FP: st.FalsePositives, FN: st.FalseNegatives,
		Recent: st.Recent, Unscored: st.Unscored, Examples: st.Examples,
	}
	for _, c := range st.Curve {
		out.Curve = append(out.Curve, pipeline.CurvePoint(c))
	}
	return out
}
