package config

import (
	"fmt"

	"streamer/anngraph"
	"streamer/brokers"
	"streamer/ingest"
	"streamer/internal/tlsconfig"
	"streamer/online"
	"streamer/online/active"
	"streamer/online/kernel"
	"streamer/online/propagate"
	"streamer/online/spectral"
	"streamer/online/train"
	"streamer/pipeline"
	"streamer/schemaregistry"
	"streamer/snapshot"
)

// solverParams returns the solver section as training's parameters.
func (c Config) solverParams() train.Params {
	return train.Params{
		Algorithm: train.Algorithm(c.Solver.Algorithm), Lambda: c.Solver.Lambda, LambdaU: c.Solver.LambdaU,
		LambdaI: c.Solver.LambdaI, LambdaSearch: c.Solver.LambdaSearch, R: c.Solver.R, MaxSwitch: c.Solver.MaxSwitch,
		PositiveCost: c.Solver.CostPos, NegativeCost: c.Solver.CostNeg,
		Spectral: spectral.Settings{Delta: c.Solver.SRDelta, Gamma: c.Solver.SRGamma, Neighbours: c.Solver.SRK},
	}
}

// Decoder returns the decoder of examples and labels; its error names the
// key of input at fault.
func (c Config) Decoder() (ingest.Decoder, error) {
	examples, err := c.exampleMapping()
	if err != nil {
		return ingest.Decoder{}, err
	}
	labels, err := c.labelMapping()
	if err != nil {
		return ingest.Decoder{}, err
	}
	return ingest.Decoder{
		Limits: ingest.Limits{
			MaxMessageBytes: c.Limits.MaxMessageBytes, MaxIDBytes: c.Limits.MaxIDBytes,
			MaxTextBytes: c.Limits.MaxTextBytes, MaxFeatures: c.Limits.MaxFeatures,
			MaxClassNameBytes: c.Limits.MaxClassNameBytes, Classes: nonEmpty(c.Limits.Classes),
		},
		Featurizer: ingest.Featurizer{
			Dim: c.Features.Dim, DenseDim: c.Features.DenseDim, Signed: c.Features.Signed, Normalize: c.Features.Normalize,
		},
		Examples: examples,
		Labels:   labels,
	}, nil
}

func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// ModelDim returns the size of the model's weight space: features.dense_dim
// when set, else features.dim.
func (c Config) ModelDim() int {
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
	dec, err := c.Decoder()
	if err != nil {
		return pipeline.Config{}, err
	}
	requests, err := c.Active.requests()
	if err != nil {
		return pipeline.Config{}, err
	}
	thresholds, err := c.Review.thresholds()
	if err != nil {
		return pipeline.Config{}, err
	}
	return pipeline.Config{
		Decoder: dec,
		Learner: online.LearnerConfig{
			Features: c.ModelDim(),
			Window: anngraph.Config{
				MaxExamples: c.Window.MaxExamples, MaxAge: c.Window.MaxAge, K: c.Window.K, Metric: metric,
				M: c.Window.M, EfConstruction: c.Window.EfConstruction, EfSearch: c.Window.EfSearch,
				Exhaustive: c.Window.Exhaustive, InsertWorkers: c.Window.InsertWorkers,
			},
			Graph: anngraph.LaplacianConfig{
				Normalized: c.Graph.Laplacian == "normalized", Degree: c.Graph.Degree, Weights: weights, Sigma: c.Graph.Sigma,
			},
			Params: c.solverParams(),
			Vote: online.VoteConfig{
				Off: c.Graph.Vote == "off", Weight: c.Graph.VoteWeight,
				Spread: propagate.Settings{Neighbours: c.Graph.VoteNeighbours},
			},
			Queue:         c.Window.Queue,
			BatchInline:   true,
			Sample:        sample,
			Kernel:        kernel.Config{Kind: c.Features.Kernel, Landmarks: c.Features.Landmarks, Gamma: c.Features.Gamma},
			SolveExamples: c.Schedule.SolveExamples,
			SolveLabels:   c.Schedule.SolveLabels,
			Review:        online.ReviewConfig{TargetPrecision: c.Review.TargetPrecision, Grades: c.Review.Grades},
		},
		Explain:  c.Predictions.Explain,
		Review:   pipeline.ReviewConfig{Thresholds: thresholds},
		Join:     ingest.JoinConfig{PendingLabels: c.Join.PendingLabels, RecentExamples: c.Join.RecentExamples},
		Baseline: c.Eval.Baseline,
		Horizon:  c.Eval.Horizon,
		Drift:    c.Drift.pipeline(),
		Requests: requests,
	}, nil
}

// SnapshotSettings returns the parts of a snapshot that come from the
// configuration.
func (c Config) SnapshotSettings() (snapshot.Features, snapshot.Params, snapshot.Window) {
	return snapshot.Features{Dim: c.Features.Dim, DenseDim: c.Features.DenseDim, Signed: c.Features.Signed, Normalize: c.Features.Normalize},
		snapshot.Params{
			Algorithm: c.Solver.Algorithm, Lambda: c.Solver.Lambda, LambdaU: c.Solver.LambdaU, LambdaI: c.Solver.LambdaI,
			R: c.Solver.R, MaxSwitch: c.Solver.MaxSwitch, PositiveCost: c.Solver.CostPos, NegativeCost: c.Solver.CostNeg,
			SRDelta: c.Solver.SRDelta, SRGamma: c.Solver.SRGamma, SRNeighbours: c.Solver.SRK,
		},
		snapshot.Window{
			MaxExamples: c.Window.MaxExamples, MaxAge: c.Window.MaxAge, K: c.Window.K,
			Laplacian: c.Graph.Laplacian, Degree: train.GraphDegree(train.Algorithm(c.Solver.Algorithm), c.Graph.Degree), Weights: c.Graph.Weights,
		}
}

// UsesSchemaRegistry reports whether input or output records are Avro,
// under schemas of the registry.
func (c Config) UsesSchemaRegistry() bool {
	return c.Input.Format == FormatAvro || c.Output.Format == FormatAvro
}

// Registry returns the settings of the schema registry's client.
func (c Config) Registry() schemaregistry.Config {
	r := c.SchemaRegistry
	out := schemaregistry.Config{URL: r.URL, Username: r.Username, Password: r.Password, Timeout: r.Timeout, CacheSchemas: r.CacheSchemas}
	if r.TLS.Enable {
		out.TLS = &tlsconfig.Files{
			CAFile: r.TLS.CAFile, CertFile: r.TLS.CertFile, KeyFile: r.TLS.KeyFile,
			ServerName: r.TLS.ServerName, InsecureSkipVerify: r.TLS.InsecureSkipVerify,
		}
	}
	return out
}

// Brokers returns the connection settings.
func (c Config) Brokers() brokers.Config {
	return brokers.Config{
		Brokers: c.Kafka.Brokers,
		TLS: brokers.TLSConfig{
			Enable: c.Kafka.TLS.Enable, CAFile: c.Kafka.TLS.CAFile, CertFile: c.Kafka.TLS.CertFile,
			KeyFile: c.Kafka.TLS.KeyFile, ServerName: c.Kafka.TLS.ServerName, InsecureSkipVerify: c.Kafka.TLS.InsecureSkipVerify,
		},
		SASL: brokers.SASLConfig{Mechanism: c.Kafka.SASL.Mechanism, Username: c.Kafka.SASL.Username, Password: c.Kafka.SASL.Password},
	}
}

// requests returns the active section as the selector of label requests
// takes it, naming the key of a bad value.
func (a ActiveConfig) requests() (active.Config, error) {
	budget, err := active.ParseBudget(a.Budget)
	if err != nil {
		return active.Config{}, fmt.Errorf("active.budget: %w", err)
	}
	cfg := active.Config{Budget: budget, RandomShare: a.RandomShare, Expiry: a.Expiry}
	switch {
	case a.RandomShare < 0 || a.RandomShare > 1:
		return cfg, fmt.Errorf("active.random_share must be in [0, 1], got %v", a.RandomShare)
	case a.Expiry <= 0:
		return cfg, fmt.Errorf("active.expiry must be > 0, got %v", a.Expiry)
	}
	return cfg, nil
}
