package train

import (
	"strings"
	"testing"
)

// TestParseAlgorithm: every algorithm's name parses to it, and an unknown
// name is refused with the names a user may give.
func TestParseAlgorithm(t *testing.T) {
	for _, a := range algorithms() {
		if got, err := ParseAlgorithm(string(a)); err != nil || got != a {
			t.Errorf("ParseAlgorithm(%q) = %q, %v", a, got, err)
		}
	}
	for _, bad := range []string{"", "svn", "SR"} {
		_, err := ParseAlgorithm(bad)
		if err == nil {
			t.Fatalf("ParseAlgorithm(%q) accepted", bad)
		}
		if !strings.Contains(err.Error(), "rls, svm, laprls, lapsvm, tsvm, da, sr, auto") {
			t.Errorf("ParseAlgorithm(%q): %v does not list the algorithms", bad, err)
		}
	}
}
