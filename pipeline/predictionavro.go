package pipeline

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// PredictionAvroSchema is the Avro schema of a Prediction, its fields
// those of the JSON encoding: ts is milliseconds since the Unix epoch,
// null when unknown; model_epoch is 0 for a process that learns alone;
// review is false and explanation null when absent from the JSON.
const PredictionAvroSchema = `{"type": "record", "name": "Prediction", "namespace": "streamer", "fields": [
  {"name": "id", "type": "string"},
  {"name": "label", "type": ["null", "string"], "default": null},
  {"name": "scores", "type": {"type": "map", "values": "double"}},
  {"name": "prob", "type": ["null", "double"], "default": null},
  {"name": "model_version", "type": "long"},
  {"name": "model_epoch", "type": "long", "default": 0},
  {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": null},
  {"name": "source", "type": {"type": "record", "name": "Source", "fields": [
    {"name": "topic", "type": "string"},
    {"name": "partition", "type": "int"},
    {"name": "offset", "type": "long"}]}},
  {"name": "reason", "type": ["null", "string"], "default": null},
  {"name": "review", "type": "boolean", "default": false},
  {"name": "explanation", "type": ["null", {"type": "record", "name": "Explanation", "fields": [
    {"name": "class", "type": "string"},
    {"name": "score", "type": "double"},
    {"name": "bias", "type": "double"},
    {"name": "space", "type": "string"},
    {"name": "terms", "type": {"type": "array", "items": {"type": "record", "name": "Term", "fields": [
      {"name": "index", "type": "int"},
      {"name": "names", "type": {"type": "array", "items": "string"}},
      {"name": "value", "type": "double"},
      {"name": "contribution", "type": "double"}]}}},
    {"name": "rest", "type": "double"},
    {"name": "neighbours", "type": {"type": "array", "items": {"type": "record", "name": "Neighbour", "fields": [
      {"name": "id", "type": "string"},
      {"name": "label", "type": "string"},
      {"name": "similarity", "type": "double"}]}}}]}], "default": null}
]}`

// AppendAvro appends the Avro binary encoding of p under
// PredictionAvroSchema to dst, written by hand as AppendJSON is: scores
// ordered by class name, strings that are not valid UTF-8 with U+FFFD in
// place of the bad bytes. A score or probability that is not finite is an
// error, as in JSON.
func (p *Prediction) AppendAvro(dst []byte) ([]byte, error) {
	dst = appendAvroString(dst, p.ID)
	dst = appendAvroOptionalString(dst, p.Label)
	var stack [maxSortedOnStack]string
	classes := stack[:0]
	for c := range p.Scores {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	if len(classes) > 0 {
		dst = binary.AppendVarint(dst, int64(len(classes)))
		for _, c := range classes {
			x := p.Scores[c]
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("score of %q: %v is not finite", c, x)
			}
			dst = appendAvroString(dst, c)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
		}
	}
	dst = append(dst, 0) // the map's last block
	if p.Prob == nil {
		dst = append(dst, 0)
	} else {
		if math.IsNaN(*p.Prob) || math.IsInf(*p.Prob, 0) {
			return nil, fmt.Errorf("prob: %v is not finite", *p.Prob)
		}
		dst = binary.AppendVarint(dst, 1)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(*p.Prob))
	}
	dst = binary.AppendVarint(dst, int64(p.ModelVersion))
	dst = binary.AppendVarint(dst, int64(p.ModelEpoch))
	if p.TS.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = binary.AppendVarint(dst, 1)
		dst = binary.AppendVarint(dst, p.TS.UnixMilli())
	}
	dst = appendAvroString(dst, p.Source.Topic)
	dst = binary.AppendVarint(dst, int64(int32(p.Source.Partition)))
	dst = binary.AppendVarint(dst, p.Source.Offset)
	if p.Reason == "" {
		dst = append(dst, 0)
	} else {
		dst = appendAvroOptionalString(dst, &p.Reason)
	}
	dst = appendAvroBool(dst, p.Review)
	if p.Explanation == nil {
		return append(dst, 0), nil
	}
	dst, err := p.Explanation.appendAvro(binary.AppendVarint(dst, 1))
	if err != nil {
		return nil, fmt.Errorf("explanation: %w", err)
	}
	return dst, nil
}

// appendAvro writes e as the Explanation record of PredictionAvroSchema;
// a number that is not finite is an error, as in JSON.
func (e *Explanation) appendAvro(dst []byte) ([]byte, error) {
	var w avroDoubles
	dst = appendAvroString(dst, e.Class)
	dst = w.append(dst, e.Score)
	dst = w.append(dst, e.Bias)
	dst = appendAvroString(dst, e.Space)
	if len(e.Terms) > 0 {
		dst = binary.AppendVarint(dst, int64(len(e.Terms)))
		for _, t := range e.Terms {
			dst = binary.AppendVarint(dst, int64(t.Index))
			if len(t.Names) > 0 {
				dst = binary.AppendVarint(dst, int64(len(t.Names)))
				for _, n := range t.Names {
					dst = appendAvroString(dst, n)
				}
			}
			dst = append(dst, 0) // the names' last block
			dst = w.append(dst, t.Value)
			dst = w.append(dst, t.Contribution)
		}
	}
	dst = append(dst, 0) // the terms' last block
	dst = w.append(dst, e.Rest)
	if len(e.Neighbours) > 0 {
		dst = binary.AppendVarint(dst, int64(len(e.Neighbours)))
		for _, n := range e.Neighbours {
			dst = appendAvroString(dst, n.ID)
			dst = appendAvroString(dst, n.Label)
			dst = w.append(dst, n.Similarity)
		}
	}
	dst = append(dst, 0) // the neighbours' last block
	return dst, w.err
}

// avroDoubles writes doubles and keeps the first that is not finite as
// an error.
type avroDoubles struct{ err error }

func (w *avroDoubles) append(dst []byte, x float64) []byte {
	if (math.IsNaN(x) || math.IsInf(x, 0)) && w.err == nil {
		w.err = fmt.Errorf("%v is not finite", x)
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
}

// appendAvroBool writes an Avro boolean: one byte, 0 or 1.
func appendAvroBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// appendAvroString writes s as an Avro string: its length as a zig-zag
// varint (binary.AppendVarint's encoding), then its bytes.
func appendAvroString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	dst = binary.AppendVarint(dst, int64(len(s)))
	return append(dst, s...)
}

// appendAvroOptionalString writes a ["null", "string"] union.
func appendAvroOptionalString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, 0)
	}
	dst = binary.AppendVarint(dst, 1)
	return appendAvroString(dst, *s)
}
