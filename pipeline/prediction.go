package pipeline

import (
	"encoding/json"
	"time"

	"streamer/ingest"
	"streamer/online"
)

// Prediction is the value of a record on the predictions topic, keyed by
// the example's id. Label and Prob are null when no model was in force;
// Reason then says why.
type Prediction struct {
	ID           string             `json:"id"`
	Label        *string            `json:"label"`
	Scores       map[string]float64 `json:"scores"`
	Prob         *float64           `json:"prob"`
	ModelVersion uint64             `json:"model_version"`
	TS           time.Time          `json:"ts,omitzero"` // absent when unknown (LIBSVM rows)
	Source       Source             `json:"source"`
	Reason       string             `json:"reason,omitempty"`
}

// Source is where the example was read.
type Source struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"`
}

// Marshal encodes p. The encoding is deterministic: scores are ordered by
// class name.
func (p *Prediction) Marshal() ([]byte, error) {
	if p.Scores == nil {
		p.Scores = map[string]float64{}
	}
	return json.Marshal(p)
}

// NewPrediction returns the prediction message of example ex, read at src,
// as model m of the given version answered it (pred): the one constructor
// of a prediction, for the service, replay and `predict` alike.
func NewPrediction(ex ingest.Example, src Source, m *online.Model, version uint64, pred online.Prediction) Prediction {
	label := m.Classes[pred.Class]
	prob := pred.Prob
	out := Prediction{
		ID: ex.ID, Label: &label, Prob: &prob, ModelVersion: version, TS: ex.TS, Source: src,
		Scores: make(map[string]float64, len(pred.Scores)),
	}
	for c, s := range pred.Scores {
		out.Scores[m.Classes[c]] = s
	}
	return out
}
