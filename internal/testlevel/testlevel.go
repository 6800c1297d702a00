// Package testlevel sorts tests into the two suites of the README: the
// fast one (go test -race -short, make test) and the long one (make
// test-long: every test, the chaos, crash and scale runs among them). It
// knows nothing of what the tests test.
package testlevel

import "testing"

// Long skips t in the fast suite, saying why it is long; the long suite
// runs it.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: make test-long runs it", why)
	}
}
