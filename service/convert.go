package service

import (
	"streamer/pipeline"
	"streamer/snapshot"
)

// snapshotProgress converts the pipeline's progress for a snapshot.
func snapshotProgress(pr pipeline.Progress) *snapshot.Progress {
	return &snapshot.Progress{Solved: pr.Solved, Prequential: pr.SSL, Baseline: pr.Baseline, Unlabeled: pr.Unlabeled,
		ReviewGrades: snapshot.NewGrades(pr.Grades), Drift: pr.Drift}
}

// pipelineProgress converts a snapshot's progress back.
func pipelineProgress(pr *snapshot.Progress) pipeline.Progress {
	return pipeline.Progress{Solved: pr.Solved, SSL: pr.Prequential, Baseline: pr.Baseline, Unlabeled: pr.Unlabeled,
		Grades: pr.ReviewGrades.Grades(), Drift: pr.Drift}
}
