package config

import (
	"fmt"
	"slices"

	"streamer/online/drift"
	"streamer/pipeline"
)

// DriftConfig is the drift section.
type DriftConfig struct {
	// Detectors names the detectors that run: labels, neighbours,
	// scores; none, or an empty list, runs none.
	Detectors  []string              `mapstructure:"detectors"`
	Labels     DriftLabelsConfig     `mapstructure:"labels"`
	Neighbours DriftNeighboursConfig `mapstructure:"neighbours"`
	Scores     DriftScoresConfig     `mapstructure:"scores"`
	Spacing    int64                 `mapstructure:"spacing"`
	// FalseAlarmExamples raises the labels and neighbours detectors'
	// thresholds where their observations per example would let them
	// alarm falsely more often than once in so many examples; 0 keeps
	// them as set.
	FalseAlarmExamples float64 `mapstructure:"false_alarm_examples"`
	// React names the reactions: forget, quicken, ask; none, or an
	// empty list, reacts with none.
	React           []string `mapstructure:"react"`
	Forget          string   `mapstructure:"forget"`
	QuickenFactor   int      `mapstructure:"quicken_factor"`
	QuickenExamples int      `mapstructure:"quicken_examples"`
	AskFactor       float64  `mapstructure:"ask_factor"`
	AskExamples     int      `mapstructure:"ask_examples"`
}

// DriftLabelsConfig is drift.labels.
type DriftLabelsConfig struct {
	Threshold float64 `mapstructure:"threshold"`
	Rise      float64 `mapstructure:"rise"`
	Reference int     `mapstructure:"reference"`
	Recent    int     `mapstructure:"recent"`
}

// DriftNeighboursConfig is drift.neighbours.
type DriftNeighboursConfig struct {
	Threshold float64 `mapstructure:"threshold"`
	Allowance float64 `mapstructure:"allowance"`
	Sample    float64 `mapstructure:"sample"`
}

// DriftScoresConfig is drift.scores.
type DriftScoresConfig struct {
	Delta     float64 `mapstructure:"delta"`
	MinChange float64 `mapstructure:"min_change"`
}

// named returns the names of a list key, without "none" and empty ones.
func named(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "" && s != "none" {
			out = append(out, s)
		}
	}
	return out
}

// validate names the first bad key of the section.
func (d DriftConfig) validate() error {
	for _, name := range named(d.Detectors) {
		if !slices.Contains(drift.Detectors, name) {
			return fmt.Errorf("drift.detectors: unknown detector %q (want labels, neighbours, scores or none)", name)
		}
	}
	for _, name := range named(d.React) {
		if name != "forget" && name != "quicken" && name != "ask" {
			return fmt.Errorf("drift.react: unknown reaction %q (want forget, quicken, ask or none)", name)
		}
	}
	checks := []struct {
		ok       bool
		key, msg string
	}{
		{d.Labels.Threshold > 0, "drift.labels.threshold", "must be > 0"},
		{d.Labels.Rise > 0 && d.Labels.Rise < 1, "drift.labels.rise", "must be in (0, 1)"},
		{d.Labels.Reference >= 20, "drift.labels.reference", "must be >= 20"},
		{d.Labels.Recent > 0, "drift.labels.recent", "must be > 0"},
		{d.Neighbours.Threshold > 0, "drift.neighbours.threshold", "must be > 0"},
		{d.Neighbours.Allowance > 0, "drift.neighbours.allowance", "must be > 0"},
		{d.Neighbours.Sample > 0 && d.Neighbours.Sample <= 1, "drift.neighbours.sample", "must be in (0, 1]"},
		{d.Scores.Delta > 0 && d.Scores.Delta < 1, "drift.scores.delta", "must be in (0, 1)"},
		{d.Scores.MinChange > 0 && d.Scores.MinChange < 1, "drift.scores.min_change", "must be in (0, 1)"},
		{d.Spacing > 0, "drift.spacing", "must be > 0"},
		{d.FalseAlarmExamples >= 0, "drift.false_alarm_examples", "must be >= 0"},
		{d.Forget == "classes" || d.Forget == "labels" || d.Forget == "rows", "drift.forget", "must be classes, labels or rows"},
		{d.QuickenFactor >= 1, "drift.quicken_factor", "must be >= 1"},
		{d.QuickenExamples > 0, "drift.quicken_examples", "must be > 0"},
		{d.AskFactor >= 1, "drift.ask_factor", "must be >= 1"},
		{d.AskExamples > 0, "drift.ask_examples", "must be > 0"},
	}
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("%s %s", ch.key, ch.msg)
		}
	}
	return nil
}

// pipeline returns the section as the core loop's drift watch.
func (d DriftConfig) pipeline() pipeline.DriftConfig {
	on := named(d.Detectors)
	off := map[string]bool{}
	for _, name := range drift.Detectors {
		off[name] = !slices.Contains(on, name)
	}
	react := named(d.React)
	return pipeline.DriftConfig{
		Off: len(on) == 0,
		Detectors: drift.Config{
			Off:                off,
			Labels:             drift.BernoulliConfig{Threshold: d.Labels.Threshold, Rise: d.Labels.Rise, Reference: d.Labels.Reference, Recent: d.Labels.Recent},
			Neighbours:         drift.CUSUMConfig{Allowance: d.Neighbours.Allowance, Threshold: d.Neighbours.Threshold},
			Scores:             drift.ADWINConfig{Delta: d.Scores.Delta, MinChange: d.Scores.MinChange},
			Spacing:            d.Spacing,
			FalseAlarmExamples: d.FalseAlarmExamples,
		},
		Sample:          d.Neighbours.Sample,
		Forget:          slices.Contains(react, "forget"),
		ForgetRows:      d.Forget == "rows",
		ForgetClasses:   d.Forget == "classes",
		Quicken:         slices.Contains(react, "quicken"),
		QuickenFactor:   d.QuickenFactor,
		QuickenExamples: d.QuickenExamples,
		Ask:             slices.Contains(react, "ask"),
		AskFactor:       d.AskFactor,
		AskExamples:     d.AskExamples,
	}
}
