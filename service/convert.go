package service

import (
	"fmt"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/online"
	"streamer/pipeline"
	"streamer/snapshot"
)

func (c Config) solverParams() online.Params {
	return online.Params{
		Algorithm: online.Algorithm(c.Solver.Algorithm), Lambda: c.Solver.Lambda, LambdaU: c.Solver.LambdaU,
		LambdaI: c.Solver.LambdaI, R: c.Solver.R, MaxSwitch: c.Solver.MaxSwitch,
		PositiveCost: c.Solver.CostPos, NegativeCost: c.Solver.CostNeg,
		SRDelta: c.Solver.SRDelta, SRGamma: c.Solver.SRGamma, SRNeighbours: c.Solver.SRK,
	}
}

// Decoder returns the decoder of examples and labels.
func (c Config) Decoder() ingest.Decoder {
	return ingest.Decoder{
		Limits: ingest.Limits{
			MaxMessageBytes: c.Limits.MaxMessageBytes, MaxIDBytes: c.Limits.MaxIDBytes,
			MaxTextBytes: c.Limits.MaxTextBytes, MaxFeatures: c.Limits.MaxFeatures,
			MaxClassNameBytes: c.Limits.MaxClassNameBytes, Classes: nonEmpty(c.Limits.Classes),
		},
		Featurizer: ingest.Featurizer{
			Dim: c.Features.Dim, DenseDim: c.Features.DenseDim, Signed: c.Features.Signed, Normalize: c.Features.Normalize,
		},
	}
}

func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// features returns the size of the model's weight space.
func (c Config) features() int {
	if c.Features.DenseDim > 0 {
		return c.Features.DenseDim
	}
	return c.Features.Dim
}

// Pipeline returns the configuration of the core loop.
func (c Config) Pipeline() (pipeline.Config, error) {
	metric, err := anngraph.ParseMetric(c.Window.Metric)
	if err != nil {
		return pipeline.Config{}, fmt.Errorf("window.metric: %w", err)
	}
	weights, err := anngraph.ParseWeightKind(c.Graph.Weights)
	if err != nil {
		return pipeline.Config{}, fmt.Errorf("graph.weights: %w", err)
	}
	sample, err := c.Window.sample()
	if err != nil {
		return pipeline.Config{}, err
	}
	return pipeline.Config{
		Decoder: c.Decoder(),
		Learner: online.LearnerConfig{
			Features: c.features(),
			Window: anngraph.Config{
				MaxExamples: c.Window.MaxExamples, MaxAge: c.Window.MaxAge, K: c.Window.K, Metric: metric,
				M: c.Window.M, EfConstruction: c.Window.EfConstruction, EfSearch: c.Window.EfSearch,
				Exhaustive: c.Window.Exhaustive, InsertWorkers: c.Window.InsertWorkers,
			},
			Graph: anngraph.LaplacianConfig{
				Normalized: c.Graph.Laplacian == "normalized", Degree: c.Graph.Degree, Weights: weights, Sigma: c.Graph.Sigma,
			},
			Params:        c.solverParams(),
			Queue:         c.Window.Queue,
			BatchInline:   true,
			Sample:        sample,
			Kernel:        online.KernelConfig{Kind: c.Features.Kernel, Landmarks: c.Features.Landmarks, Gamma: c.Features.Gamma},
			SolveExamples: c.Schedule.SolveExamples,
			SolveLabels:   c.Schedule.SolveLabels,
		},
		Join:     ingest.JoinConfig{PendingLabels: c.Join.PendingLabels, RecentExamples: c.Join.RecentExamples},
		Baseline: c.Eval.Baseline,
		Horizon:  c.Eval.Horizon,
	}, nil
}

// snapshotSettings returns the parts of a snapshot that come from the
// configuration.
func (c Config) snapshotSettings() (snapshot.Features, snapshot.Params, snapshot.Window) {
	return snapshot.Features{Dim: c.Features.Dim, DenseDim: c.Features.DenseDim, Signed: c.Features.Signed, Normalize: c.Features.Normalize},
		snapshot.FromParams(c.solverParams()),
		snapshot.Window{
			MaxExamples: c.Window.MaxExamples, MaxAge: c.Window.MaxAge, K: c.Window.K,
			Laplacian: c.Graph.Laplacian, Degree: online.GraphDegree(online.Algorithm(c.Solver.Algorithm), c.Graph.Degree), Weights: c.Graph.Weights,
		}
}

// snapshotProgress converts the pipeline's progress for a snapshot.
func snapshotProgress(pr pipeline.Progress) *snapshot.Progress {
	return &snapshot.Progress{Solved: pr.Solved, Prequential: pr.SSL, Baseline: pr.Baseline}
}

// pipelineProgress converts a snapshot's progress back.
func pipelineProgress(pr *snapshot.Progress) pipeline.Progress {
	return pipeline.Progress{Solved: pr.Solved, SSL: pr.Prequential, Baseline: pr.Baseline}
}
