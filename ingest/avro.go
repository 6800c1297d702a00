package ingest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// SchemaSource gives the Avro schema that a record in Confluent's wire
// format names by id: a schema registry's client. It must be safe for
// concurrent use.
type SchemaSource interface {
	// AvroSchema returns the schema registered under id. Its error wraps
	// ErrSchemaNotFound when the registry answered that it has none, and
	// ErrSchemaUnusable when what it has is not an Avro schema that
	// parses: the record is refused. Any other error means that the
	// registry could not be asked: the record must wait, not be refused.
	AvroSchema(ctx context.Context, id uint32) (avro.Schema, error)
}

var (
	// ErrSchemaNotFound is wrapped by a SchemaSource's error when the
	// registry has no schema of the id asked for.
	ErrSchemaNotFound = errors.New("schema not found")
	// ErrSchemaUnusable is wrapped by a SchemaSource's error when the
	// schema of the id is not Avro or does not parse.
	ErrSchemaUnusable = errors.New("schema not usable")
	// ErrSchemaUnavailable is wrapped by the decoder's error, not a
	// *DecodeError, when the schema of a record could not be had from its
	// source (the registry is away, or answers with an error of its own):
	// the record is good as far as anyone knows, and is to be decoded
	// again later rather than refused.
	ErrSchemaUnavailable = errors.New("schema registry unavailable")
)

// Confluent's wire format: a magic byte 0, the schema id as 4 bytes big
// endian, then the Avro binary encoding of the value.
const (
	wireMagic  = 0
	wireHeader = 5
)

// WireHeader returns the header of Confluent's wire format for schema id
// id, which the Avro binary encoding of the value follows.
func WireHeader(id uint32) [wireHeader]byte {
	var h [wireHeader]byte
	binary.BigEndian.PutUint32(h[1:], id)
	return h
}

// avroJSON decodes the Avro record value in Confluent's wire format, with
// its schema from d.Avro, into its JSON form, which the mappings read as
// they read a JSON message. The JSON form of an Avro value: a record or
// a map is an object, an array an array, a union its branch's value, an
// enum its symbol, int and long numbers (but a date, timestamp-millis and
// timestamp-micros are RFC 3339 strings in UTC), float and double numbers
// (NaN and infinities refused), a decimal a number, bytes and fixed base64
// strings. It returns the JSON and the bound to hold it to.
func (d *Decoder) avroJSON(ctx context.Context, value []byte, lim Limits) ([]byte, Limits, error) {
	switch {
	case len(value) > lim.MaxMessageBytes:
		return nil, lim, decodeErr(ReasonOversized, "", "record is %d bytes, limit %d", len(value), lim.MaxMessageBytes)
	case len(value) == 0:
		return nil, lim, decodeErr(ReasonNotWireFormat, "", "record is empty (a record without a value, such as a tombstone)")
	case value[0] != wireMagic:
		return nil, lim, decodeErr(ReasonNotWireFormat, "", "magic byte is %d, want 0 (Confluent's wire format)", value[0])
	case len(value) < wireHeader:
		return nil, lim, decodeErr(ReasonNotWireFormat, "", "record is %d bytes, shorter than the wire format's header", len(value))
	}
	id := binary.BigEndian.Uint32(value[1:wireHeader])
	schema, err := d.Avro.AvroSchema(ctx, id)
	switch {
	case errors.Is(err, ErrSchemaNotFound):
		return nil, lim, &DecodeError{Reason: ReasonUnknownSchema, Err: fmt.Errorf("schema id %d: %w", id, err)}
	case errors.Is(err, ErrSchemaUnusable):
		return nil, lim, &DecodeError{Reason: ReasonUnusableSchema, Err: fmt.Errorf("schema id %d: %w", id, err)}
	case err != nil:
		return nil, lim, fmt.Errorf("schema id %d: %w: %w", id, ErrSchemaUnavailable, err)
	}
	lim.MaxMessageBytes = avroJSONBytes(lim.MaxMessageBytes)
	t := avroTranscoder{r: avro.NewReader(nil, 0).Reset(value[wireHeader:]), limit: lim.MaxMessageBytes, body: len(value)}
	t.path = t.steps[:0]
	t.out = make([]byte, 0, 2*len(value)+16)
	if err := t.value(schema, 0); err != nil {
		var de *DecodeError
		if errors.As(err, &de) && de.Field == "" {
			de.Field = t.pointer()
		}
		return nil, lim, fmt.Errorf("schema id %d: %w", id, err)
	}
	if t.r.Peek(); t.r.Error == nil {
		return nil, lim, decodeErr(ReasonMalformedAvro, "", "schema id %d: bytes left after the value", id)
	}
	return t.out, lim, nil
}

// avroJSONBytes bounds the JSON form of an Avro record of at most
// maxBytes bytes: field names and escapes make it larger than the record,
// but a record whose form outgrows this (arrays of nulls, which take no
// bytes) is refused.
func avroJSONBytes(maxBytes int) int {
	return 8*maxBytes + 64<<10
}

// avroTranscoder writes the JSON form of an Avro binary value.
type avroTranscoder struct {
	r       *avro.Reader
	out     []byte
	limit   int
	body    int    // bytes of the record, a bound on any length in it
	scratch []byte // of strings and bytes being read
	// path is where in the value the transcoder is: one step per record,
	// array or map it is inside, so that an error can name the field.
	path  []avroStep
	steps [4]avroStep // path's first backing array
}

// avroStep is the member of one record, array or map that the
// transcoder is in: a record's field, an array's item (from 0), or a
// map's key, as the span of t.out that holds it as a JSON string.
type avroStep struct {
	field    string
	item     int64
	key, end int
}

// pointer returns the JSON Pointer of where the transcoder is in the
// value's JSON form, "" at its top.
func (t *avroTranscoder) pointer() string {
	var b strings.Builder
	for _, s := range t.path {
		switch {
		case s.field != "":
			b.WriteString("/" + escapePointer(s.field))
		case s.end > s.key:
			key, err := strconv.Unquote(string(t.out[s.key:s.end]))
			if err != nil {
				return b.String()
			}
			b.WriteString("/" + escapePointer(key))
		case s.item >= 0:
			b.WriteString("/" + strconv.FormatInt(s.item, 10))
		default: // a block header, before any item or key
			return b.String()
		}
	}
	return b.String()
}

// escapePointer escapes a member name as a JSON Pointer's reference
// token (RFC 6901).
func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

func (t *avroTranscoder) value(s avro.Schema, depth int) error {
	if depth > maxNesting {
		return decodeErr(ReasonMalformedAvro, "", "values nested more than %d deep", maxNesting)
	}
	if len(t.out) > t.limit {
		return decodeErr(ReasonOversized, "", "the record's JSON form is over %d bytes", t.limit)
	}
	var err error
	switch s.Type() {
	case avro.Null:
		t.out = append(t.out, "null"...)
	case avro.Boolean:
		t.out = strconv.AppendBool(t.out, t.r.ReadBool())
	case avro.Int, avro.Long:
		t.integer(s)
	case avro.Float:
		err = t.float(float64(t.r.ReadFloat()), 32)
	case avro.Double:
		err = t.float(t.r.ReadDouble(), 64)
	case avro.String:
		err = t.str()
	case avro.Bytes:
		err = t.bytes(s, -1)
	case avro.Fixed:
		err = t.bytes(s, s.(*avro.FixedSchema).Size())
	case avro.Enum:
		symbols := s.(*avro.EnumSchema).Symbols()
		k := t.r.ReadInt()
		if k < 0 || int(k) >= len(symbols) {
			return t.malformed("enum index %d of %d symbols", k, len(symbols))
		}
		t.out = appendJSONString(t.out, symbols[k])
	case avro.Array:
		err = t.array(s.(*avro.ArraySchema).Items(), depth)
	case avro.Map:
		err = t.object(s.(*avro.MapSchema).Values(), depth)
	case avro.Record:
		err = t.record(s.(*avro.RecordSchema), depth)
	case avro.Union:
		types := s.(*avro.UnionSchema).Types()
		k := t.r.ReadLong()
		if k < 0 || k >= int64(len(types)) {
			return t.malformed("union index %d of %d types", k, len(types))
		}
		err = t.value(types[k], depth+1)
	case avro.Ref:
		err = t.value(s.(*avro.RefSchema).Schema(), depth+1)
	default:
		return decodeErr(ReasonUnusableSchema, "", "schema type %s", s.Type())
	}
	if err == nil && t.r.Error != nil {
		return t.malformed("%v", t.r.Error)
	}
	return err
}

func (t *avroTranscoder) malformed(format string, args ...any) error {
	if t.r.Error != nil {
		format, args = "%v", []any{t.r.Error}
	}
	return decodeErr(ReasonMalformedAvro, "", "value does not match its schema: "+format, args...)
}

// integer writes an int or a long, or the time it stands for.
func (t *avroTranscoder) integer(s avro.Schema) {
	var x int64
	if s.Type() == avro.Int {
		x = int64(t.r.ReadInt())
	} else {
		x = t.r.ReadLong()
	}
	var ts time.Time
	switch logicalType(s) {
	case avro.Date:
		ts = time.Unix(x*86400, 0)
	case avro.TimestampMillis, avro.LocalTimestampMillis:
		ts = time.UnixMilli(x)
	case avro.TimestampMicros, avro.LocalTimestampMicros:
		ts = time.UnixMicro(x)
	default:
		t.out = strconv.AppendInt(t.out, x, 10)
		return
	}
	t.out = append(t.out, '"')
	t.out = ts.UTC().AppendFormat(t.out, time.RFC3339Nano)
	t.out = append(t.out, '"')
}

func logicalType(s avro.Schema) avro.LogicalType {
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		return ls.Logical().Type()
	}
	return ""
}

func (t *avroTranscoder) float(x float64, bits int) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return decodeErr(ReasonNonFinite, "", "a float of the record is %v", x)
	}
	t.out = strconv.AppendFloat(t.out, x, 'g', -1, bits)
	return nil
}

// read reads the next n bytes of the record into t.scratch.
func (t *avroTranscoder) read(n int64) ([]byte, error) {
	if n < 0 || n > int64(t.body) {
		return nil, t.malformed("length %d in a record of %d bytes", n, t.body)
	}
	if cap(t.scratch) < int(n) {
		t.scratch = make([]byte, n)
	}
	b := t.scratch[:n]
	t.r.Read(b)
	if t.r.Error != nil {
		return nil, t.malformed("")
	}
	return b, nil
}

func (t *avroTranscoder) str() error {
	b, err := t.read(t.r.ReadLong())
	if err != nil {
		return err
	}
	if !utf8.Valid(b) {
		return decodeErr(ReasonInvalidUTF8, "", "a string of the record is not valid UTF-8")
	}
	t.out = appendJSONString(t.out, b)
	return nil
}

// bytes writes bytes (size < 0) or a fixed: a decimal as a number, else
// base64.
func (t *avroTranscoder) bytes(s avro.Schema, size int) error {
	n := int64(size)
	if size < 0 {
		n = t.r.ReadLong()
	}
	b, err := t.read(n)
	if err != nil {
		return err
	}
	if logicalType(s) == avro.Decimal {
		scale := s.(avro.LogicalTypeSchema).Logical().(*avro.DecimalLogicalSchema).Scale()
		t.out = appendDecimal(t.out, b, scale)
		return nil
	}
	t.out = append(t.out, '"')
	t.out = base64.StdEncoding.AppendEncode(t.out, b)
	t.out = append(t.out, '"')
	return nil
}

// appendDecimal writes the decimal of unscaled value b (two's complement,
// big endian) and scale.
func appendDecimal(dst, b []byte, scale int) []byte {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return append(dst, new(big.Rat).SetFrac(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale)...)
}

// blocks calls item for each item of an array or a map, block by block.
func (t *avroTranscoder) blocks(item func() error) error {
	for {
		n, _ := t.r.ReadBlockHeader()
		switch {
		case t.r.Error != nil:
			return t.malformed("")
		case n == 0:
			return nil
		case n < 0:
			return t.malformed("block of %d items", n)
		}
		for ; n > 0; n-- {
			if err := item(); err != nil {
				return err
			}
			if len(t.out) > t.limit {
				return decodeErr(ReasonOversized, "", "the record's JSON form is over %d bytes", t.limit)
			}
		}
	}
}

func (t *avroTranscoder) array(items avro.Schema, depth int) error {
	t.out = append(t.out, '[')
	at := len(t.path)
	t.path = append(t.path, avroStep{item: -1})
	err := t.blocks(func() error {
		if t.path[at].item++; t.path[at].item > 0 {
			t.out = append(t.out, ',')
		}
		return t.value(items, depth+1)
	})
	if err != nil {
		return err
	}
	t.path = t.path[:at]
	t.out = append(t.out, ']')
	return nil
}

func (t *avroTranscoder) object(values avro.Schema, depth int) error {
	t.out = append(t.out, '{')
	at := len(t.path)
	t.path = append(t.path, avroStep{item: -1})
	first := true
	err := t.blocks(func() error {
		if !first {
			t.out = append(t.out, ',')
		}
		first = false
		t.path[at] = avroStep{key: len(t.out)}
		if err := t.str(); err != nil {
			t.path = t.path[:at] // the map, since the key is not known
			return err
		}
		t.path[at].end = len(t.out)
		t.out = append(t.out, ':')
		return t.value(values, depth+1)
	})
	if err != nil {
		return err
	}
	t.path = t.path[:at]
	t.out = append(t.out, '}')
	return nil
}

func (t *avroTranscoder) record(s *avro.RecordSchema, depth int) error {
	t.out = append(t.out, '{')
	at := len(t.path)
	t.path = append(t.path, avroStep{})
	for k, f := range s.Fields() {
		if k > 0 {
			t.out = append(t.out, ',')
		}
		t.path[at].field = f.Name()
		t.out = appendJSONString(t.out, f.Name())
		t.out = append(t.out, ':')
		if err := t.value(f.Type(), depth+1); err != nil {
			return err
		}
	}
	t.path = t.path[:at]
	t.out = append(t.out, '}')
	return nil
}

// appendJSONString writes the valid UTF-8 s as a JSON string.
func appendJSONString[T ~string | ~[]byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
