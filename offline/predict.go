package offline

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"streamer/ingest"
	"streamer/pipeline"
	"streamer/snapshot"
)

// PredictReport is what `streamer predict` prints.
type PredictReport struct {
	Model        string   `json:"model"`
	ModelVersion uint64   `json:"model_version"`
	Rows         int      `json:"rows"`
	Labeled      int      `json:"labeled"`
	Accuracy     *float64 `json:"accuracy,omitempty"`
	MacroF1      *float64 `json:"macro_f1,omitempty"`
	BadRecords   int      `json:"bad_records"`
}

// DecoderFor returns the decoder that reads data for the snapshot's model:
// its featurizer settings, except that a LIBSVM file's indices may exceed
// the model's dimension (the model ignores those features).
func DecoderFor(snap *snapshot.Snapshot, path string) *ingest.Decoder {
	f := snap.Features
	dec := &ingest.Decoder{Featurizer: ingest.Featurizer{Dim: f.Dim, DenseDim: f.DenseDim, Signed: f.Signed, Normalize: f.Normalize}}
	if !ingest.IsJSONLines(path) {
		dec.Featurizer.Dim = 1 << 31
	}
	return dec
}

// PredictOption changes how Predict reads its file or scores its rows.
type PredictOption func(*predictSettings)

type predictSettings struct {
	dec     *ingest.Decoder
	scoring *pipeline.Config
}

// WithUnlabeledLabel says which LIBSVM label marks an unlabeled row in the
// file (by default ingest.UnlabeledAuto: decided from the file's labels).
func WithUnlabeledLabel(u ingest.UnlabeledLabel) PredictOption {
	return func(s *predictSettings) { s.dec.Unlabeled = u }
}

// WithMapping reads a JSONL file's rows where m says (input.examples);
// nil is the default schema.
func WithMapping(m *ingest.ExampleMapping) PredictOption {
	return func(s *predictSettings) { s.dec.Examples = m }
}

// WithScoring scores the rows as a service of configuration cfg scores
// them with the snapshot's model in force: marked for review below their
// class's threshold (cfg.Review, and the thresholds published with the
// model for cfg's target precision) and explained (cfg.Explain). The
// rows are still read as the other options and the snapshot say.
func WithScoring(cfg pipeline.Config) PredictOption {
	return func(s *predictSettings) { s.scoring = &cfg }
}

// Predict scores every record of path with the snapshot's model and writes
// one prediction per line to out, in the service's schema (the source is
// the file and the record's line). With labels in the file it also scores
// the predictions.
func Predict(snap *snapshot.Snapshot, path string, out io.Writer, opts ...PredictOption) (PredictReport, error) {
	return PredictWarning(snap, path, out, nil, opts...)
}

// PredictWarning is Predict that also writes to warnings, when it is not
// nil, which records were rejected (up to MaxBadLines) and the file's
// labels that are no class of the model: those count as errors.
func PredictWarning(snap *snapshot.Snapshot, path string, out, warnings io.Writer, opts ...PredictOption) (PredictReport, error) {
	rep := PredictReport{Model: snap.Name, ModelVersion: snap.Version}
	snap.Model.Pack()
	w := bufio.NewWriter(out)
	score := pipeline.NewPrequential(0, 0)
	classes := map[string]bool{}
	for _, c := range snap.Model.Classes {
		classes[c] = true
	}
	foreign := map[string]int{}
	set := predictSettings{dec: DecoderFor(snap, path)}
	for _, o := range opts {
		o(&set)
	}
	predict, err := scorer(snap, set)
	if err != nil {
		return rep, err
	}
	bad, err := eachRecordNamingBad(path, set.dec, warnings, func(rec ingest.Record) error {
		p, err := predict(rec.Example, pipeline.Source{Topic: path, Offset: int64(rec.Line)})
		if err != nil {
			return err
		}
		line, err := p.Marshal()
		if err != nil {
			return err
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("write predictions: %w", err)
		}
		rep.Rows++
		if rec.Labeled {
			rep.Labeled++
			score.Add(*p.Label, rec.Label, rep.Rows)
			if !classes[rec.Label] {
				foreign[rec.Label]++
			}
		}
		return nil
	})
	rep.BadRecords = bad
	if err != nil {
		return rep, err
	}
	warnForeignLabels(warnings, snap, foreign, rep.Labeled)
	if rep.Labeled > 0 {
		acc, f1 := score.Total().Accuracy(), score.Total().MacroF1()
		rep.Accuracy, rep.MacroF1 = &acc, &f1
	}
	if err := w.Flush(); err != nil {
		return rep, fmt.Errorf("write predictions: %w", err)
	}
	return rep, nil
}

// scorer returns how Predict scores a row: the snapshot's model's
// prediction in the service's schema, routed and explained when the
// settings score as a service does.
func scorer(snap *snapshot.Snapshot, set predictSettings) (func(ingest.Example, pipeline.Source) (pipeline.Prediction, error), error) {
	if set.scoring == nil {
		return func(ex ingest.Example, src pipeline.Source) (pipeline.Prediction, error) {
			return pipeline.NewPrediction(ex, src, &snap.Model, snap.Stamp(), snap.Model.Predict(ex.Vector)), nil
		}, nil
	}
	cfg := *set.scoring
	// Rows are featurized as the model's features were, and the words an
	// explanation names are kept.
	set.dec.KeepNames = cfg.Explain > 0
	cfg.Decoder = *set.dec
	cfg.Baseline = false
	pipe, err := pipeline.New(cfg)
	if err != nil {
		return nil, err
	}
	pipe.SetModel(pipeline.Restored(snap))
	return pipe.ScoreOne, nil
}

// warnForeignLabels says which labels of the file are no class of the
// model: a model fitted on other labels scores 0 there, silently else.
func warnForeignLabels(w io.Writer, snap *snapshot.Snapshot, foreign map[string]int, labeled int) {
	if w == nil || len(foreign) == 0 {
		return
	}
	names := make([]string, 0, len(foreign))
	n := 0
	for l, c := range foreign {
		names = append(names, l)
		n += c
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	fmt.Fprintf(w, "warning: %d of %d labeled records have a label that is no class of the model %v: %s; they count as errors\n",
		n, labeled, snap.Model.Classes, strings.Join(names, ", "))
}
