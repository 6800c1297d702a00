package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"streamer/vector"
)

// Example is one decoded example.
type Example struct {
	ID string
	// TS is the event time; zero when the message has none, for the caller
	// to substitute the Kafka message time.
	TS time.Time
	// Label is the class, normalized (numbers as decimal strings: 1.0 and +1
	// become "1"); "" when Labeled is false.
	Label   string
	Labeled bool
	// Vector is sparse for text, features and indices/values payloads and
	// LIBSVM lines (sorted, unique indices in [0, Dim)), dense for a vector
	// payload. It shares no memory with the decoded input.
	Vector vector.Vector
	// Names names the hashed indices of named features, and Text is the
	// text (a mapping's text fields joined by line breaks, as they were
	// hashed), when the decoder was asked to keep them
	// (Decoder.KeepNames); nil and "" otherwise. Featurizer.ExampleNames
	// names the indices of both.
	Names Names
	Text  string
}

// Label is a late label for the example with the same ID.
type Label struct {
	ID    string
	Label string // normalized as Example.Label
}

// Decoder decodes example and label messages and file lines. The zero value
// uses default limits and featurizer, and the default schemas. It holds
// configuration only, so one Decoder may serve any number of goroutines.
type Decoder struct {
	Limits     Limits
	Featurizer Featurizer
	// Unlabeled says which LIBSVM label marks an unlabeled row; the zero
	// value, UnlabeledAuto, lets FileReader decide per file.
	Unlabeled UnlabeledLabel
	// Examples and Labels, when set, say where the fields of example and
	// label messages are; nil is the default schema (DecodeExample,
	// DecodeLabel), which has a decoding path of its own.
	Examples *ExampleMapping
	Labels   *LabelMapping
	// Avro, when set, makes the records Avro in Confluent's wire format,
	// whose schemas it gives (DecodeExampleRecord); nil: records are JSON.
	// Messages decoded without their record (DecodeExample) are JSON
	// always.
	Avro SchemaSource
	// KeepNames makes DecodeExample name the hashed indices of each
	// example (Example.Names), for explanations; off, decoding names
	// nothing and costs nothing more.
	KeepNames bool
}

// Validate reports the first configuration field that is out of range. The
// decoder takes out-of-range values as their defaults.
func (d *Decoder) Validate() error {
	if err := d.Limits.Validate(); err != nil {
		return fmt.Errorf("decoder: %w", err)
	}
	if err := d.Featurizer.Validate(); err != nil {
		return fmt.Errorf("decoder: %w", err)
	}
	if d.Examples != nil {
		if err := d.Examples.Validate(); err != nil {
			return fmt.Errorf("decoder: %w", err)
		}
	}
	if d.Labels != nil {
		if err := d.Labels.Validate(); err != nil {
			return fmt.Errorf("decoder: %w", err)
		}
	}
	return nil
}

// DecodeExample decodes an example message:
//
//	{"id": "...", "ts": "RFC 3339", "label": "..." or 1, <payload>}
//
// with exactly one payload among "text": "...", "features": {"name or
// index": value}, "indices": [...] with "values": [...], and "vector":
// [...]. A null field counts as absent; other fields are ignored; field
// names are matched exactly. Feature keys made of decimal digits are
// indices, keys of a minus sign and digits are rejected as negative
// indices, and every other key is a name hashed into [0, Dim); a name given
// twice is summed like a hash collision. Errors are *DecodeError, wrapped.
//
// With Examples set, the fields are where it says, and a message decoded
// without its record (DecodeExampleRecord) has no id when the id is the
// record key. Errors then name the pointer at fault.
func (d *Decoder) DecodeExample(b []byte) (Example, error) {
	return wrapExample(d.decodeExample(b, nil, false, d.Limits.withDefaults()))
}

// DecodeExampleRecord decodes the example of a record: its value, and its
// key when the id is the record key (ExampleMapping.IDFromKey). With Avro
// set, the value is Avro in Confluent's wire format, and the mapping reads
// its JSON form (avroJSON); an error that wraps ErrSchemaUnavailable then
// says that its schema could not be had: decode it again later.
func (d *Decoder) DecodeExampleRecord(ctx context.Context, key, value []byte) (Example, error) {
	lim := d.Limits.withDefaults()
	if d.Avro != nil {
		var err error
		if value, lim, err = d.avroJSON(ctx, value, lim); err != nil {
			return wrapExample(Example{}, err)
		}
	}
	return wrapExample(d.decodeExample(value, key, true, lim))
}

func wrapExample(ex Example, err error) (Example, error) {
	switch {
	case err == nil:
		return ex, nil
	case ex.ID != "":
		return Example{}, fmt.Errorf("decode example %q: %w", ex.ID, err)
	}
	return Example{}, fmt.Errorf("decode example: %w", err)
}

// decodeExample returns the id it got as far as, for the error message.
// Without a record (record false), an id taken from the key is empty.
func (d *Decoder) decodeExample(b, key []byte, record bool, lim Limits) (Example, error) {
	if m := d.Examples; m != nil {
		if m.IDFromKey && !record {
			noKey := *m
			noKey.IDFromKey, noKey.ID = false, Pointer{}
			return d.mappedExample(&noKey, b, nil, lim)
		}
		return d.mappedExample(m, b, key, lim)
	}
	var f exampleFields
	if err := scanObject(b, lim.MaxMessageBytes, f.set); err != nil {
		return Example{}, err
	}
	var ex Example
	var err error
	if ex.ID, err = parseID(f.id, "id", false, lim); err != nil {
		return ex, err
	}
	if ex.TS, err = parseTS(f.ts, "ts", TimeNoNumbers); err != nil {
		return ex, err
	}
	if ex.Label, ex.Labeled, err = parseLabel(f.label, "label", lim); err != nil {
		return ex, err
	}
	ex.Vector, err = d.Featurizer.payload(&f, lim)
	if err == nil && d.KeepNames {
		d.Featurizer.keepNames(&f, &ex)
	}
	return ex, err
}

// DecodeLabel decodes a label message, {"id": "...", "label": "..." or 1};
// other fields are ignored and the label is required. With Labels set,
// the fields are where it says.
func (d *Decoder) DecodeLabel(b []byte) (Label, error) {
	return wrapLabel(d.decodeLabel(b, nil, d.Limits.withDefaults()))
}

// DecodeLabelRecord decodes the label of a record: its value, and its key
// when the id is the record key (LabelMapping.IDFromKey); Avro as
// DecodeExampleRecord.
func (d *Decoder) DecodeLabelRecord(ctx context.Context, key, value []byte) (Label, error) {
	lim := d.Limits.withDefaults()
	if d.Avro != nil {
		var err error
		if value, lim, err = d.avroJSON(ctx, value, lim); err != nil {
			return wrapLabel(Label{}, err)
		}
	}
	return wrapLabel(d.decodeLabel(value, key, lim))
}

func wrapLabel(l Label, err error) (Label, error) {
	switch {
	case err == nil:
		return l, nil
	case l.ID != "":
		return Label{}, fmt.Errorf("decode label for %q: %w", l.ID, err)
	}
	return Label{}, fmt.Errorf("decode label: %w", err)
}

func (d *Decoder) decodeLabel(b, key []byte, lim Limits) (Label, error) {
	if d.Labels != nil {
		return d.mappedLabel(d.Labels, b, key, lim)
	}
	var id, label []byte
	err := scanObject(b, lim.MaxMessageBytes, func(name, val []byte) error {
		switch string(name) {
		case "id":
			return setOnce(&id, name, val)
		case "label":
			return setOnce(&label, name, val)
		}
		return nil
	})
	if err != nil {
		return Label{}, err
	}
	var l Label
	if l.ID, err = parseID(id, "id", false, lim); err != nil {
		return l, err
	}
	var labeled bool
	l.Label, labeled, err = parseLabel(label, "label", lim)
	if err == nil && !labeled {
		err = decodeErr(ReasonMissingLabel, "label", "a label message needs a label")
	}
	return l, err
}

// exampleFields holds the raw values of the fields of an example message,
// nil for those absent.
type exampleFields struct {
	id, ts, label                           []byte
	text, features, indices, values, vector []byte
}

// set stores the raw value of the member name, if it is a field of the
// schema.
func (f *exampleFields) set(name, val []byte) error {
	var p *[]byte
	switch string(name) {
	case "id":
		p = &f.id
	case "ts":
		p = &f.ts
	case "label":
		p = &f.label
	case "text":
		p = &f.text
	case "features":
		p = &f.features
	case "indices":
		p = &f.indices
	case "values":
		p = &f.values
	case "vector":
		p = &f.vector
	default:
		return nil
	}
	return setOnce(p, name, val)
}

// setOnce stores val into the field *p of the member name; a field filled
// twice is an error.
func setOnce(p *[]byte, name, val []byte) error {
	if *p != nil {
		return decodeErr(ReasonDuplicateField, string(name), "field appears more than once")
	}
	*p = val
	return nil
}

// scanObject checks that b is a JSON object within maxBytes and calls set
// with the name and raw value of each member, in document order. (A
// setter, not a function returning where to store, so that the caller's
// fields can stay on its stack.)
func scanObject(b []byte, maxBytes int, set func(name, val []byte) error) error {
	obj, err := topObject(b, maxBytes)
	if err != nil {
		return err
	}
	return eachMember(obj, func(key, val []byte) error {
		name, err := stringContent(key)
		if err != nil {
			return &DecodeError{Reason: ReasonMalformedJSON, Err: fmt.Errorf("key %s: %w", clip(key), err)}
		}
		return set(name, val)
	})
}

// topObject returns the JSON object that b holds, without the white space
// around it.
func topObject(b []byte, maxBytes int) ([]byte, error) {
	switch {
	case len(b) > maxBytes:
		return nil, decodeErr(ReasonOversized, "", "message is %d bytes, limit %d", len(b), maxBytes)
	case len(b) == 0:
		return nil, decodeErr(ReasonMalformedJSON, "", "message is empty (a record without a value, such as a tombstone)")
	case validJSON(b):
	case !utf8.Valid(b):
		return nil, decodeErr(ReasonInvalidUTF8, "", "message is not valid UTF-8")
	default:
		return nil, &DecodeError{Reason: ReasonMalformedJSON, Err: syntaxError(b)}
	}
	i := skipSpace(b, 0)
	if b[i] != '{' {
		return nil, decodeErr(ReasonWrongType, "", "message is a %s, want an object", kind(b[i:]))
	}
	return b[i:valueEnd(b, i)], nil
}

// syntaxError explains why b is not JSON; it runs only then.
func syntaxError(b []byte) error {
	var v struct{}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// parseID reads the id at field: a string, or a number when numbers is
// set.
func parseID(raw []byte, field string, numbers bool, lim Limits) (string, error) {
	if raw == nil || isNull(raw) {
		return "", decodeErr(ReasonMissingID, field, "%s", missing(field))
	}
	var id []byte
	switch {
	case raw[0] == '"':
		var err error
		if id, err = stringContent(raw); err != nil {
			return "", &DecodeError{Reason: ReasonMalformedJSON, Field: field, Err: err}
		}
	case numbers && isNumber(raw):
		s, err := numericID(raw, field)
		if err != nil {
			return "", err
		}
		id = []byte(s)
	default:
		return "", decodeErr(ReasonWrongType, field, "%s is a %s, want a string", field, kind(raw))
	}
	switch {
	case len(id) == 0:
		return "", decodeErr(ReasonMissingID, field, "%s is empty", field)
	case len(id) > lim.MaxIDBytes:
		return "", decodeErr(ReasonIDTooLong, field, "%s is %d bytes, limit %d", field, len(id), lim.MaxIDBytes)
	}
	return string(id), nil
}

// missing says that the field is absent: "no id" for a field of the
// default schema, "missing" for a pointer, which the error names before.
func missing(field string) string {
	if strings.HasPrefix(field, "/") {
		return "missing"
	}
	return "no " + field
}

// parseTS reads the event time at field: an RFC 3339 string, or a number
// in unit.
func parseTS(raw []byte, field string, unit TimeUnit) (time.Time, error) {
	if raw == nil || isNull(raw) {
		return time.Time{}, nil
	}
	if isNumber(raw) && unit != TimeNoNumbers {
		x, err := parseFloat(raw, field)
		if err != nil {
			return time.Time{}, err
		}
		ts, ok := numericTime(x, unit)
		if !ok {
			return time.Time{}, decodeErr(ReasonBadTimestamp, field, "%s is outside the years 1 to 9999", clip(raw))
		}
		return ts, nil
	}
	if raw[0] != '"' {
		return time.Time{}, decodeErr(ReasonWrongType, field, "%s is a %s, want an RFC 3339 string", field, kind(raw))
	}
	s, err := stringContent(raw)
	if err != nil {
		return time.Time{}, &DecodeError{Reason: ReasonMalformedJSON, Field: field, Err: err}
	}
	ts, err := time.Parse(time.RFC3339, string(s))
	if err != nil {
		return time.Time{}, &DecodeError{Reason: ReasonBadTimestamp, Field: field, Err: err}
	}
	return ts, nil
}

// parseLabel returns the normalized label at field and whether there is
// one.
func parseLabel(raw []byte, field string, lim Limits) (string, bool, error) {
	if raw == nil || isNull(raw) {
		return "", false, nil
	}
	var label string
	switch {
	case raw[0] == '"':
		s, err := stringContent(raw)
		if err != nil {
			return "", false, &DecodeError{Reason: ReasonMalformedJSON, Field: field, Err: err}
		}
		if len(s) > lim.MaxClassNameBytes {
			return "", false, classTooLong(len(s), field, lim)
		}
		label = string(s)
	case isNumber(raw):
		x, err := parseFloat(raw, field)
		if err != nil {
			return "", false, err
		}
		label = numericLabel(x)
	default:
		return "", false, decodeErr(ReasonWrongType, field, "%s is a %s, want a string or a number", field, kind(raw))
	}
	return label, true, checkClass(label, field, lim)
}

// numericLabel writes a label given as a number in its shortest decimal
// form, so that 1, 1.0, 1e0 and +1 all become "1".
func numericLabel(x float64) string {
	if x == 0 {
		return "0" // and not "-0"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

func checkClass(label, field string, lim Limits) error {
	switch {
	case label == "":
		return decodeErr(ReasonEmptyLabel, field, "%s is empty", field)
	case len(label) > lim.MaxClassNameBytes:
		return classTooLong(len(label), field, lim)
	case lim.Classes != nil && !slices.Contains(lim.Classes, label):
		return decodeErr(ReasonUnknownClass, field, "label %q is not one of the %d configured classes", clip([]byte(label)), len(lim.Classes))
	}
	return nil
}

func classTooLong(n int, field string, lim Limits) error {
	return decodeErr(ReasonClassNameTooLong, field, "%s is %d bytes, limit %d", field, n, lim.MaxClassNameBytes)
}

// parseFloat parses a number token (JSON or LIBSVM); a token that is not
// a number is wrong_type, one beyond float64 (or NaN, Inf) non_finite.
func parseFloat(tok []byte, field string) (float64, error) {
	x, err := strconv.ParseFloat(string(tok), 64)
	switch {
	case err == nil && !math.IsInf(x, 0) && !math.IsNaN(x):
		return x, nil
	case err == nil || errors.Is(err, strconv.ErrRange):
		return 0, decodeErr(ReasonNonFinite, field, "%s is not a finite float64", clip(tok))
	}
	return 0, decodeErr(ReasonWrongType, field, "%q is not a number", clip(tok))
}
