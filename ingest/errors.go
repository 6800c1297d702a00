package ingest

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Reason is the machine-readable cause of a DecodeError, short enough for a
// dead-letter header and a metric label.
type Reason string

// The reasons a message or line can be rejected for.
const (
	ReasonOversized         Reason = "oversized"           // message, line or text longer than its limit
	ReasonInvalidUTF8       Reason = "invalid_utf8"        // bytes that are not UTF-8
	ReasonMalformedJSON     Reason = "malformed_json"      // not JSON at all
	ReasonMalformedLine     Reason = "malformed_line"      // a LIBSVM line that is not "label idx:val ..."
	ReasonWrongType         Reason = "wrong_type"          // a JSON value or LIBSVM token of the wrong type
	ReasonDuplicateField    Reason = "duplicate_field"     // a schema field given twice in one object
	ReasonMissingID         Reason = "missing_id"          // id absent, null or empty
	ReasonIDTooLong         Reason = "id_too_long"         // id longer than Limits.MaxIDBytes
	ReasonBadTimestamp      Reason = "bad_timestamp"       // ts present but not RFC 3339
	ReasonMissingLabel      Reason = "missing_label"       // a label message without a label
	ReasonEmptyLabel        Reason = "empty_label"         // label given as ""
	ReasonClassNameTooLong  Reason = "class_name_too_long" // label longer than Limits.MaxClassNameBytes
	ReasonUnknownClass      Reason = "unknown_class"       // label not in Limits.Classes
	ReasonNoPayload         Reason = "no_payload"          // none of text, features, indices/values, vector
	ReasonMultiplePayloads  Reason = "multiple_payloads"   // more than one of them
	ReasonEmptyText         Reason = "empty_text"          // text with no letters or digits
	ReasonNonFinite         Reason = "non_finite"          // a number that overflows float64, NaN or Inf
	ReasonBadIndex          Reason = "bad_index"           // index negative, out of range, fractional or repeated
	ReasonTooManyFeatures   Reason = "too_many_features"   // more than Limits.MaxFeatures values
	ReasonLengthMismatch    Reason = "length_mismatch"     // indices and values of different lengths
	ReasonDimensionMismatch Reason = "dimension_mismatch"  // dense vector empty or not Featurizer.DenseDim long
	ReasonNotWireFormat     Reason = "not_wire_format"     // an Avro record without the magic byte 0 and a schema id
	ReasonUnknownSchema     Reason = "unknown_schema"      // a schema id the registry has no schema of
	ReasonUnusableSchema    Reason = "unusable_schema"     // a schema id whose schema is not Avro or does not parse
	ReasonMalformedAvro     Reason = "malformed_avro"      // an Avro body that does not match its schema
)

// Reasons returns every Reason, for registering metrics up front.
func Reasons() []Reason {
	return []Reason{
		ReasonOversized, ReasonInvalidUTF8, ReasonMalformedJSON, ReasonMalformedLine,
		ReasonWrongType, ReasonDuplicateField, ReasonMissingID, ReasonIDTooLong,
		ReasonBadTimestamp, ReasonMissingLabel, ReasonEmptyLabel, ReasonClassNameTooLong,
		ReasonUnknownClass, ReasonNoPayload, ReasonMultiplePayloads, ReasonEmptyText,
		ReasonNonFinite, ReasonBadIndex, ReasonTooManyFeatures, ReasonLengthMismatch,
		ReasonDimensionMismatch, ReasonNotWireFormat, ReasonUnknownSchema, ReasonUnusableSchema,
		ReasonMalformedAvro,
	}
}

// DecodeError is returned for input that cannot become an Example or a
// Label. The message is bad, not the service: send it to the dead letters
// with Reason and move on.
type DecodeError struct {
	Reason Reason
	// Field is the JSON field at fault ("id", "features", ...), the JSON
	// Pointer of a mapped field ("/post_id"), "key" for the record key, or,
	// for a LIBSVM line, "label" or "features"; empty when the whole input
	// is.
	Field string
	Err   error
}

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %v", e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Field, e.Reason, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// ReasonOf returns the Reason of the DecodeError in err's chain, or "" when
// err is nil or not a decoding error.
func ReasonOf(err error) Reason {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Reason
	}
	return ""
}

func decodeErr(r Reason, field, format string, args ...any) *DecodeError {
	return &DecodeError{Reason: r, Field: field, Err: fmt.Errorf(format, args...)}
}

// clip shortens outside text quoted in error messages, which end up in
// headers and logs.
func clip(b []byte) string {
	const limit = 64
	if len(b) <= limit {
		return string(b)
	}
	n := limit
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}
