package pipeline

import (
	"errors"

	"streamer/ingest"
	"streamer/online"
)

// RefusalReason is the short code of why an input was refused: the
// dead-letter header dlq-reason, and the reason of a 400 from POST
// /v1/predict.
func RefusalReason(err error) string {
	if r := ingest.ReasonOf(err); r != "" {
		return string(r)
	}
	if errors.Is(err, online.ErrIncompatible) {
		return "incompatible_vector"
	}
	return "rejected"
}

// RefusalReasons are every code RefusalReason returns.
func RefusalReasons() []string {
	var out []string
	for _, r := range ingest.Reasons() {
		out = append(out, string(r))
	}
	return append(out, "incompatible_vector", "rejected")
}
