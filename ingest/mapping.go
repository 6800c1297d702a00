package ingest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"streamer/vector"
)

// ExampleMapping says where the fields of an example are in a message of
// another schema than the default one (DecodeExample), by JSON Pointers.
// A zero Pointer leaves its field out of the messages. An absent member, a
// missing array element and null all count as absent.
type ExampleMapping struct {
	// ID points at the example's id; with IDFromKey the id is the record's
	// key instead, and ID is not read.
	ID        Pointer
	IDFromKey bool
	// IDNumbers also takes a number as the id: an integer as written (78,
	// -3), any other number in its shortest decimal form (78.0 and 7.8e1
	// are "78"). Without it a number is wrong_type.
	IDNumbers bool
	// TS points at the event time: an RFC 3339 string, or a number read as
	// TSNumbers says.
	TS        Pointer
	TSNumbers TimeUnit
	// Text points at the text fields, read in order and joined by a line
	// break into one text.
	Text []Pointer
	// Features points at an object of name (or index) → number, read as
	// the default schema's "features"; Fields are named features one
	// pointer each. Both are named features, hashed alike.
	Features Pointer
	Fields   []FeatureField
	// Indices and Values point at the parallel arrays of a sparse vector,
	// Vector at a dense one.
	Indices, Values, Vector Pointer
	// Label points at the class (a string, or a number written in its
	// shortest decimal form); null or absent: unlabeled.
	Label Pointer
	// TextWithFeatures lets an example carry text and named features
	// together: both are hashed into the one feature space, and their
	// vectors added (the text's of unit norm, the features' as
	// Featurizer.Normalize says). Without it, as in the default schema, an
	// example carries exactly one payload.
	TextWithFeatures bool
}

// FeatureField is one named feature: the number At points at.
type FeatureField struct {
	Name string
	At   Pointer
}

// LabelMapping says where the fields of a label message are.
type LabelMapping struct {
	ID        Pointer
	IDFromKey bool
	IDNumbers bool
	Label     Pointer
}

// TimeUnit says what a number given as an event time is.
type TimeUnit uint8

const (
	// TimeNoNumbers refuses a number (wrong_type): times are RFC 3339
	// strings only, as in the default schema.
	TimeNoNumbers TimeUnit = iota
	// TimeSeconds reads a number as Unix seconds (fractions kept).
	TimeSeconds
	// TimeMilliseconds reads a number as Unix milliseconds.
	TimeMilliseconds
	// TimeAuto reads a number of magnitude below 1e11 as seconds (dates up
	// to the year 5138), any larger one as milliseconds (dates from March
	// 1973 on): the two ranges meet nowhere in the times a stream carries.
	TimeAuto
)

// autoMillis is where TimeAuto begins to read milliseconds.
const autoMillis = 1e11

// ParseTimeUnit reads "refuse", "seconds", "milliseconds" or "auto".
func ParseTimeUnit(s string) (TimeUnit, error) {
	switch s {
	case "refuse", "":
		return TimeNoNumbers, nil
	case "seconds":
		return TimeSeconds, nil
	case "milliseconds":
		return TimeMilliseconds, nil
	case "auto":
		return TimeAuto, nil
	}
	return 0, fmt.Errorf("%q is not refuse, seconds, milliseconds or auto", s)
}

// DefaultExampleMapping is the default schema written as a mapping.
func DefaultExampleMapping() ExampleMapping {
	return ExampleMapping{
		ID: MustPointer("/id"), TS: MustPointer("/ts"), Text: []Pointer{MustPointer("/text")},
		Features: MustPointer("/features"), Indices: MustPointer("/indices"), Values: MustPointer("/values"),
		Vector: MustPointer("/vector"), Label: MustPointer("/label"),
	}
}

// DefaultLabelMapping is the default label schema written as a mapping.
func DefaultLabelMapping() LabelMapping {
	return LabelMapping{ID: MustPointer("/id"), Label: MustPointer("/label")}
}

// IsDefault reports whether m is the default schema, which the decoder
// reads by a path of its own.
func (m ExampleMapping) IsDefault() bool {
	d := DefaultExampleMapping()
	return m.ID.equal(d.ID) && !m.IDFromKey && !m.IDNumbers && m.TS.equal(d.TS) && m.TSNumbers == d.TSNumbers &&
		slices.EqualFunc(m.Text, d.Text, Pointer.equal) && m.Features.equal(d.Features) && len(m.Fields) == 0 &&
		m.Indices.equal(d.Indices) && m.Values.equal(d.Values) && m.Vector.equal(d.Vector) && m.Label.equal(d.Label) &&
		!m.TextWithFeatures
}

// IsDefault reports whether m is the default label schema.
func (m LabelMapping) IsDefault() bool {
	d := DefaultLabelMapping()
	return m.ID.equal(d.ID) && !m.IDFromKey && !m.IDNumbers && m.Label.equal(d.Label)
}

func (p Pointer) equal(q Pointer) bool { return p.text == q.text }

// Validate reports the first field that is out of place.
func (m ExampleMapping) Validate() error {
	if m.ID.IsZero() && !m.IDFromKey {
		return fmt.Errorf("mapping: ID is empty and IDFromKey is not set")
	}
	if m.TSNumbers > TimeAuto {
		return fmt.Errorf("mapping: TSNumbers %d is not a TimeUnit", m.TSNumbers)
	}
	seen := map[string]bool{}
	for k, f := range m.Fields {
		switch {
		case f.Name == "" || !utf8.ValidString(f.Name):
			return fmt.Errorf("mapping: Fields[%d] has an empty or invalid name", k)
		case f.At.IsZero():
			return fmt.Errorf("mapping: Fields[%d] (%s) points at nothing", k, f.Name)
		case seen[f.Name]:
			return fmt.Errorf("mapping: Fields[%d]: %s is named twice", k, f.Name)
		}
		seen[f.Name] = true
	}
	for k, p := range m.Text {
		if p.IsZero() {
			return fmt.Errorf("mapping: Text[%d] points at nothing", k)
		}
	}
	if m.Indices.IsZero() != m.Values.IsZero() {
		return fmt.Errorf("mapping: Indices and Values go together")
	}
	return nil
}

// Validate reports the first field that is out of place.
func (m LabelMapping) Validate() error {
	switch {
	case m.ID.IsZero() && !m.IDFromKey:
		return fmt.Errorf("label mapping: ID is empty and IDFromKey is not set")
	case m.Label.IsZero():
		return fmt.Errorf("label mapping: Label is empty")
	}
	return nil
}

// fieldKey is the Field of errors about the record key.
const fieldKey = "key"

// mappedExample decodes the message b of record key key by m.
func (d *Decoder) mappedExample(m *ExampleMapping, b, key []byte, lim Limits) (Example, error) {
	doc, err := topObject(b, lim.MaxMessageBytes)
	if err != nil {
		return Example{}, err
	}
	var ex Example
	if ex.ID, err = mappedID(doc, key, m.ID, m.IDFromKey, m.IDNumbers, lim); err != nil {
		return ex, err
	}
	if ex.TS, err = mappedTS(doc, m.TS, m.TSNumbers); err != nil {
		return ex, err
	}
	if !m.Label.IsZero() {
		raw, err := m.Label.lookup(doc)
		if err != nil {
			return ex, err
		}
		if ex.Label, ex.Labeled, err = parseLabel(raw, m.Label.text, lim); err != nil {
			return ex, err
		}
	}
	var p mappedFields
	if err := p.lookup(m, doc); err != nil {
		return ex, err
	}
	ex.Vector, err = d.Featurizer.mappedPayload(m, &p, doc, lim)
	if err == nil && d.KeepNames {
		d.Featurizer.keepMappedNames(m, &p, doc, &ex)
	}
	return ex, err
}

// mappedLabel decodes the label message b of record key key by m.
func (d *Decoder) mappedLabel(m *LabelMapping, b, key []byte, lim Limits) (Label, error) {
	doc, err := topObject(b, lim.MaxMessageBytes)
	if err != nil {
		return Label{}, err
	}
	var l Label
	if l.ID, err = mappedID(doc, key, m.ID, m.IDFromKey, m.IDNumbers, lim); err != nil {
		return l, err
	}
	raw, err := m.Label.lookup(doc)
	if err != nil {
		return l, err
	}
	var labeled bool
	l.Label, labeled, err = parseLabel(raw, m.Label.text, lim)
	if err == nil && !labeled {
		err = decodeErr(ReasonMissingLabel, m.Label.text, "a label message needs a label")
	}
	return l, err
}

// mappedID reads the id; a mapping without one (an example decoded
// without its record, whose id is the key) has the empty id.
func mappedID(doc, key []byte, at Pointer, fromKey, numbers bool, lim Limits) (string, error) {
	switch {
	case fromKey:
		return keyID(key, lim)
	case at.IsZero():
		return "", nil
	}
	raw, err := at.lookup(doc)
	if err != nil {
		return "", err
	}
	return parseID(raw, at.text, numbers, lim)
}

// keyID takes the record key as the id.
func keyID(key []byte, lim Limits) (string, error) {
	switch {
	case len(key) == 0:
		return "", decodeErr(ReasonMissingID, fieldKey, "the record has no key")
	case !utf8.Valid(key):
		return "", decodeErr(ReasonInvalidUTF8, fieldKey, "the record key is not valid UTF-8")
	case len(key) > lim.MaxIDBytes:
		return "", decodeErr(ReasonIDTooLong, fieldKey, "the record key is %d bytes, limit %d", len(key), lim.MaxIDBytes)
	}
	return string(key), nil
}

// numericID writes an id given as the number token tok: an integer as
// written (JSON has no leading zeros; -0 is 0), any other number in its
// shortest decimal form, so that every spelling of a number is one id.
func numericID(tok []byte, field string) (string, error) {
	integer := true
	for k, c := range tok {
		if (c < '0' || c > '9') && (k > 0 || c != '-') {
			integer = false
			break
		}
	}
	switch {
	case integer && string(tok) == "-0":
		return "0", nil
	case integer:
		return string(tok), nil
	}
	x, err := parseFloat(tok, field)
	if err != nil {
		return "", err
	}
	return numericLabel(x), nil
}

func mappedTS(doc []byte, at Pointer, unit TimeUnit) (time.Time, error) {
	if at.IsZero() {
		return time.Time{}, nil
	}
	raw, err := at.lookup(doc)
	if err != nil {
		return time.Time{}, err
	}
	return parseTS(raw, at.text, unit)
}

// numericTime reads the event time x in unit; ok is false outside the
// years 1 to 9999, which RFC 3339 can write.
func numericTime(x float64, unit TimeUnit) (t time.Time, ok bool) {
	millis := unit == TimeMilliseconds || unit == TimeAuto && math.Abs(x) >= autoMillis
	sec := x
	if millis {
		sec = x / 1e3
	}
	const first, last = -62135596800, 253402300799 // 0001-01-01T00:00:00Z, 9999-12-31T23:59:59Z
	if !(sec >= first && sec < last+1) {
		return time.Time{}, false
	}
	whole := math.Floor(sec)
	ns := math.Round((sec - whole) * 1e9)
	if millis {
		// The fraction of a millisecond count, kept to the nanosecond
		// without the rounding of the division above.
		wholeMillis := math.Floor(x)
		return time.UnixMilli(int64(wholeMillis)).Add(time.Duration(math.Round((x - wholeMillis) * 1e6))).UTC(), true
	}
	return time.Unix(int64(whole), int64(ns)).UTC(), true
}

// mappedPayload featurizes the payload fields p of m, looked up in doc.
func (f Featurizer) mappedPayload(m *ExampleMapping, p *mappedFields, doc []byte, lim Limits) (vector.Vector, error) {
	text := len(p.texts) > 0
	named := p.features != nil || p.fields > 0
	explicit := p.indices != nil || p.values != nil
	dense := p.vector != nil
	var n int
	for _, given := range []bool{text || named && m.TextWithFeatures, named && !m.TextWithFeatures, explicit, dense} {
		if given {
			n++
		}
	}
	switch {
	case n == 0:
		return vector.Vector{}, decodeErr(ReasonNoPayload, "", "none of %s", m.payloadPointers())
	case n > 1:
		return vector.Vector{}, decodeErr(ReasonMultiplePayloads, "", "more than one payload among %s", m.payloadPointers())
	case text || named:
		return f.hashedPayload(m, p, doc, lim)
	case dense:
		return f.vectorPayload(p.vector, m.Vector.text, lim)
	}
	return f.indexedPayload(p.indices, p.values, m.Indices.text, m.Values.text, lim)
}

// mappedFields are the raw payload values of a message, nil for those
// absent.
type mappedFields struct {
	texts                   [][]byte // the text fields present, in order
	textAt                  []string // their pointers
	features                []byte
	fields                  int // feature fields present
	indices, values, vector []byte
	textStack               [4][]byte
	textAtStack             [4]string
}

func (p *mappedFields) lookup(m *ExampleMapping, doc []byte) error {
	p.texts, p.textAt = p.textStack[:0], p.textAtStack[:0]
	for _, at := range m.Text {
		raw, err := at.lookup(doc)
		if err != nil {
			return err
		}
		if raw != nil && !isNull(raw) {
			p.texts = append(p.texts, raw)
			p.textAt = append(p.textAt, at.text)
		}
	}
	for _, fp := range []struct {
		at  Pointer
		raw *[]byte
	}{{m.Features, &p.features}, {m.Indices, &p.indices}, {m.Values, &p.values}, {m.Vector, &p.vector}} {
		if fp.at.IsZero() {
			continue
		}
		raw, err := fp.at.lookup(doc)
		if err != nil {
			return err
		}
		if raw != nil && !isNull(raw) {
			*fp.raw = raw
		}
	}
	for _, ff := range m.Fields {
		raw, err := ff.At.lookup(doc)
		if err != nil {
			return err
		}
		if raw != nil && !isNull(raw) {
			p.fields++
		}
	}
	return nil
}

// payloadPointers lists the payload fields of m for error messages.
func (m *ExampleMapping) payloadPointers() string {
	var all []string
	for _, p := range m.Text {
		all = append(all, p.text)
	}
	for _, p := range []Pointer{m.Features, m.Indices, m.Values, m.Vector} {
		if !p.IsZero() {
			all = append(all, p.text)
		}
	}
	for _, ff := range m.Fields {
		all = append(all, ff.At.text)
	}
	return strings.Join(all, ", ")
}

// hashedPayload featurizes the text and named features of a message, one
// or both (ExampleMapping.TextWithFeatures).
func (f Featurizer) hashedPayload(m *ExampleMapping, p *mappedFields, doc []byte, lim Limits) (vector.Vector, error) {
	var text vector.Vector
	if len(p.texts) > 0 {
		var err error
		if text, err = f.mappedText(p, lim); err != nil {
			return vector.Vector{}, err
		}
	}
	if p.features == nil && p.fields == 0 {
		if text.NNZ() == 0 {
			return vector.Vector{}, decodeErr(ReasonEmptyText, p.textAt[0], "text has no letters or digits")
		}
		return text, nil
	}
	named, err := f.namedFeatures(m, p, doc, lim)
	if err != nil || len(p.texts) == 0 {
		return named, err
	}
	return addSparse(text, named), nil
}

// mappedText featurizes the text fields present, joined by line breaks.
func (f Featurizer) mappedText(p *mappedFields, lim Limits) (vector.Vector, error) {
	if len(p.texts) == 1 {
		v, err := f.textPayload(p.texts[0], p.textAt[0], lim)
		if ReasonOf(err) == ReasonEmptyText {
			return vector.Vector{}, nil // the caller decides, beside the features
		}
		return v, err
	}
	var joined []byte
	for k, raw := range p.texts {
		if raw[0] != '"' {
			return vector.Vector{}, decodeErr(ReasonWrongType, p.textAt[k], "%s is a %s, want a string", p.textAt[k], kind(raw))
		}
		s, err := stringContent(raw)
		if err != nil {
			return vector.Vector{}, &DecodeError{Reason: ReasonMalformedJSON, Field: p.textAt[k], Err: err}
		}
		if k > 0 {
			joined = append(joined, '\n')
		}
		if joined = append(joined, s...); len(joined) > lim.MaxTextBytes {
			return vector.Vector{}, decodeErr(ReasonOversized, p.textAt[k], "text is over %d bytes", lim.MaxTextBytes)
		}
	}
	return textVector(f, joined), nil
}

// namedFeatures featurizes the features object and the feature fields.
func (f Featurizer) namedFeatures(m *ExampleMapping, p *mappedFields, doc []byte, lim Limits) (vector.Vector, error) {
	var es []entry
	var err error
	if p.features != nil {
		if es, err = f.appendFeatureEntries(nil, p.features, m.Features.text, lim); err != nil {
			return vector.Vector{}, err
		}
	}
	for _, ff := range m.Fields {
		raw, err := ff.At.lookup(doc)
		if err != nil {
			return vector.Vector{}, err
		}
		if raw == nil || isNull(raw) {
			continue
		}
		if len(es) == lim.MaxFeatures {
			return vector.Vector{}, decodeErr(ReasonTooManyFeatures, ff.At.text, "more than %d features", lim.MaxFeatures)
		}
		if !isNumber(raw) {
			return vector.Vector{}, decodeErr(ReasonWrongType, ff.At.text, "%s is a %s, want a number", ff.At.text, kind(raw))
		}
		x, err := parseFloat(raw, ff.At.text)
		if err != nil {
			return vector.Vector{}, err
		}
		e, err := f.nameEntry([]byte(ff.Name), x, ff.At.text)
		if err != nil {
			return vector.Vector{}, err
		}
		es = append(es, e)
	}
	field := m.Features.text
	if field == "" {
		field = m.Fields[0].At.text
	}
	v, err := sparseFromEntries(es, field)
	if err == nil && f.Normalize {
		normalize(v)
	}
	return v, err
}
