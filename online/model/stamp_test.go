package model

import "testing"

func TestStampNewer(t *testing.T) {
	for _, tc := range []struct {
		a, b Stamp
		want bool
	}{
		{Stamp{0, 2}, Stamp{0, 1}, true},
		{Stamp{0, 1}, Stamp{0, 1}, false},
		{Stamp{0, 1}, Stamp{0, 2}, false},
		{Stamp{2, 1}, Stamp{1, 900}, true},  // a new term wins whatever the versions
		{Stamp{1, 900}, Stamp{2, 1}, false}, // a fenced learner's late snapshot loses
		{Stamp{3, 7}, Stamp{3, 7}, false},   // the same snapshot read again
		{Stamp{1, 0}, Stamp{0, 1 << 40}, true},
	} {
		if got := tc.a.Newer(tc.b); got != tc.want {
			t.Errorf("%v.Newer(%v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if tc.a != tc.b && tc.a.Newer(tc.b) == tc.b.Newer(tc.a) {
			t.Errorf("%v and %v: Newer is not antisymmetric", tc.a, tc.b)
		}
	}
}
