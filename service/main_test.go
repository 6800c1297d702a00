package service

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// goroutine of the service is owned and waited for, and the tests close
// what they start.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
