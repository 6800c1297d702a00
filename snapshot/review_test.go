package snapshot

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestReviewThresholdsRoundTrip(t *testing.T) {
	s := testSnapshot(3, 20, 1, 5)
	s.ReviewThresholds, s.ReviewTargetPrecision = Thresholds{0.8, math.Inf(1), 0}, 0.95
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip changed the review thresholds: got %v for %v, want %v for %v",
			got.ReviewThresholds, got.ReviewTargetPrecision, s.ReviewThresholds, s.ReviewTargetPrecision)
	}
}

func TestSummarySaysTheReviewThresholds(t *testing.T) {
	s := testSnapshot(3, 20, 1, 5)
	var b strings.Builder
	if err := Summarize(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "review      no thresholds") {
		t.Errorf("summary of a snapshot without thresholds:\n%s", b.String())
	}
	s.ReviewThresholds, s.ReviewTargetPrecision = Thresholds{0.8, math.Inf(1), 0}, 0.95
	b.Reset()
	if err := Summarize(&b, s); err != nil {
		t.Fatal(err)
	}
	c := s.Model.Classes
	want := "review      predictions sent to review, for precision 0.95: " + c[0] + " below 0.8, " + c[1] + " all, " + c[2] + " none"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}

func TestDecodeRefusesBadReviewThresholds(t *testing.T) {
	tests := []struct {
		name       string
		thresholds Thresholds
		target     float64
		field      string
	}{
		{"too few", Thresholds{0.8, 0.9}, 0.95, "review_thresholds"},
		{"too many", Thresholds{0.8, 0.9, 0.7, 0.6}, 0.95, "review_thresholds"},
		{"above 1", Thresholds{0.8, 1.5, 0.7}, 0.95, "review_thresholds[1]"},
		{"negative", Thresholds{-0.1, 0.9, 0.7}, 0.95, "review_thresholds[0]"},
		{"no target", Thresholds{0.8, 0.9, 0.7}, 0, "review_target_precision"},
		{"target alone", nil, 0.9, "review_thresholds"},
	}
	for _, tt := range tests {
		s := testSnapshot(3, 20, 1, 6)
		s.ReviewThresholds, s.ReviewTargetPrecision = tt.thresholds, tt.target
		data, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Decode(data)
		if !errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: err = %v, want ErrNotSnapshot naming %s", tt.name, err, tt.field)
		}
	}
}
