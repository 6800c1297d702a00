package publish

import (
	"encoding/json"
	"time"
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
