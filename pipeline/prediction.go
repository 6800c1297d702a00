package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"streamer/ingest"
	"streamer/online/model"
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
	// ModelEpoch is the epoch of the learner that made the model (the
	// model is (ModelEpoch, ModelVersion), model.Stamp); absent when 0,
	// as for a process that learns alone.
	ModelEpoch uint64    `json:"model_epoch,omitempty"`
	TS         time.Time `json:"ts,omitzero"` // absent when unknown (LIBSVM rows)
	Source     Source    `json:"source"`
	Reason     string    `json:"reason,omitempty"`
	// Review is set when the prediction's probability is below its
	// class's review threshold: the prediction is also published for
	// people to review.
	Review bool `json:"review,omitempty"`
	// Explanation says why the label was predicted, when asked for.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// Explanation splits the score of the predicted class into a bias and a
// term per input (model.Attribute): the largest terms are listed, and
// Rest sums the others, so that Bias + the terms' contributions + Rest is
// Score. Neighbours lists the labeled window rows nearest to the example
// when the model was solved over a kNN graph.
type Explanation struct {
	Class string  `json:"class"`
	Score float64 `json:"score"`
	Bias  float64 `json:"bias"`
	// Space is "features" (terms are the example's features) or
	// "landmarks" (a kernel map's landmarks, whose kernel value with the
	// example is the term's value).
	Space      string      `json:"space"`
	Terms      []Term      `json:"terms"`
	Rest       float64     `json:"rest"`
	Neighbours []Neighbour `json:"neighbours,omitempty"`
}

// Term is one input's part in a score: its index (feature or landmark),
// the words, bigrams or feature names hashed there, its value in the
// example and its contribution to the score.
type Term struct {
	Index        int32    `json:"index"`
	Names        []string `json:"names,omitempty"`
	Value        float64  `json:"value"`
	Contribution float64  `json:"contribution"`
}

// Neighbour is a labeled window row near the example.
type Neighbour struct {
	ID         string  `json:"id"`
	Label      string  `json:"label"`
	Similarity float64 `json:"similarity"`
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
	return p.AppendJSON(nil)
}

// MarshalJSON encodes p as AppendJSON does.
func (p Prediction) MarshalJSON() ([]byte, error) {
	return p.AppendJSON(nil)
}

// maxSortedOnStack is the number of classes whose names AppendJSON sorts
// without allocating.
const maxSortedOnStack = 16

// AppendJSON appends the JSON encoding of p to dst: byte for byte what
// encoding/json makes of the struct (fields in declaration order, scores
// ordered by class name, strings escaped as json.Marshal escapes them, HTML
// characters included), written by hand because the consumer encodes every
// prediction and reflection was a twentieth of its time. A score or
// probability that is not finite is an error, as for json.Marshal.
func (p *Prediction) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, p.ID)
	dst = append(dst, `,"label":`...)
	if p.Label == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, *p.Label)
	}
	dst = append(dst, `,"scores":{`...)
	var stack [maxSortedOnStack]string
	classes := stack[:0]
	for c := range p.Scores {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	var err error
	for k, c := range classes {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, c)
		dst = append(dst, ':')
		if dst, err = appendFloat(dst, p.Scores[c]); err != nil {
			return nil, fmt.Errorf("score of %q: %w", c, err)
		}
	}
	dst = append(dst, `},"prob":`...)
	if p.Prob == nil {
		dst = append(dst, "null"...)
	} else if dst, err = appendFloat(dst, *p.Prob); err != nil {
		return nil, fmt.Errorf("prob: %w", err)
	}
	dst = append(dst, `,"model_version":`...)
	dst = strconv.AppendUint(dst, p.ModelVersion, 10)
	if p.ModelEpoch != 0 {
		dst = append(dst, `,"model_epoch":`...)
		dst = strconv.AppendUint(dst, p.ModelEpoch, 10)
	}
	if !p.TS.IsZero() {
		dst = append(dst, `,"ts":`...)
		if dst, err = appendTime(dst, p.TS); err != nil {
			return nil, err
		}
	}
	dst = append(dst, `,"source":{"topic":`...)
	dst = appendString(dst, p.Source.Topic)
	dst = append(dst, `,"partition":`...)
	dst = strconv.AppendInt(dst, int64(p.Source.Partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, p.Source.Offset, 10)
	dst = append(dst, '}')
	if p.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = appendString(dst, p.Reason)
	}
	if p.Review {
		dst = append(dst, `,"review":true`...)
	}
	if p.Explanation != nil {
		b, err := json.Marshal(p.Explanation)
		if err != nil {
			return nil, fmt.Errorf("explanation: %w", err)
		}
		dst = append(dst, `,"explanation":`...)
		dst = append(dst, b...)
	}
	return append(dst, '}'), nil
}

// errNotFinite is encoding/json's refusal of NaN and ±Inf.
var errNotFinite = errors.New("json: unsupported value: not a finite number")

// appendFloat writes f as encoding/json writes a float64: the shortest
// decimal that reads back the same, in exponent form below 1e-6 and from
// 1e21, with a one-digit negative exponent written without its zero.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errNotFinite
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendTime writes t as time.Time.MarshalJSON does: RFC 3339 with
// nanoseconds, quoted. The times it refuses (years outside [0, 9999], a
// zone offset of a day or more) are left to it, for its error.
func appendTime(dst []byte, t time.Time) ([]byte, error) {
	_, offset := t.Zone()
	if y := t.Year(); y < 0 || y > 9999 || offset <= -24*3600 || offset >= 24*3600 {
		b, err := t.MarshalJSON()
		return append(dst, b...), err
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}

const hexDigits = "0123456789abcdef"

// htmlSafe reports whether json.Marshal writes the ASCII byte c as it is:
// not a control character, a quote, a backslash, or one of <, > and &.
func htmlSafe(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// appendString writes s as a JSON string as json.Marshal does: invalid
// UTF-8 becomes U+FFFD, and <, >, &, U+2028 and U+2029 are escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe(c) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// NewPrediction returns the prediction message of example ex, read at src,
// as model m of stamp st answered it (pred): the one constructor of a
// prediction, for the service, replay and `predict` alike.
func NewPrediction(ex ingest.Example, src Source, m *model.Model, st model.Stamp, pred model.Prediction) Prediction {
	label := m.Classes[pred.Class]
	prob := pred.Prob
	out := Prediction{
		ID: ex.ID, Label: &label, Prob: &prob, ModelVersion: st.Version, ModelEpoch: st.Epoch, TS: ex.TS, Source: src,
		Scores: make(map[string]float64, len(pred.Scores)),
	}
	for c, s := range pred.Scores {
		out.Scores[m.Classes[c]] = s
	}
	return out
}
