package offline

import (
	"bufio"
	"fmt"
	"io"

	"streamer/ingest"
	"streamer/pipeline"
	"streamer/publish"
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

// PredictOption changes how Predict reads its file.
type PredictOption func(*ingest.Decoder)

// WithZeroLabel says what a LIBSVM label of 0 means in the file (by
// default ingest.ZeroAuto: decided from the file's labels).
func WithZeroLabel(z ingest.ZeroLabel) PredictOption {
	return func(d *ingest.Decoder) { d.ZeroLabel = z }
}

// Predict scores every record of path with the snapshot's model and writes
// one prediction per line to out, in the service's schema (the source is
// the file and the record's line). With labels in the file it also scores
// the predictions.
func Predict(snap *snapshot.Snapshot, path string, out io.Writer, opts ...PredictOption) (PredictReport, error) {
	rep := PredictReport{Model: snap.Name, ModelVersion: snap.Version}
	w := bufio.NewWriter(out)
	score := pipeline.NewPrequential(0, 0)
	dec := DecoderFor(snap, path)
	for _, o := range opts {
		o(dec)
	}
	bad, err := eachRecord(path, dec, func(rec ingest.Record) error {
		p := Score(snap, rec.Example, publish.Source{Topic: path, Offset: int64(rec.Line)})
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
		}
		return nil
	})
	rep.BadRecords = bad
	if err != nil {
		return rep, err
	}
	if rep.Labeled > 0 {
		acc, f1 := score.Total().Accuracy(), score.Total().MacroF1()
		rep.Accuracy, rep.MacroF1 = &acc, &f1
	}
	if err := w.Flush(); err != nil {
		return rep, fmt.Errorf("write predictions: %w", err)
	}
	return rep, nil
}

// Score is the prediction of a pinned snapshot's model for one example, in
// the service's schema; `replay --snapshot` and `predict` share it.
func Score(snap *snapshot.Snapshot, ex ingest.Example, src publish.Source) publish.Prediction {
	m := &snap.Model
	pred := m.Predict(ex.Vector)
	label := m.Classes[pred.Class]
	prob := pred.Prob
	out := publish.Prediction{
		ID: ex.ID, Label: &label, Prob: &prob, ModelVersion: snap.Version, TS: ex.TS, Source: src,
		Scores: make(map[string]float64, len(pred.Scores)),
	}
	for c, s := range pred.Scores {
		out.Scores[m.Classes[c]] = s
	}
	return out
}
