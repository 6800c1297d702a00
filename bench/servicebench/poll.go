package servicebench

import (
	"context"
	"fmt"
	"time"
)

func pollUntil(ctx context.Context, timeout time.Duration, cond func() bool, what string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not within %v", what, timeout)
		case <-tick.C:
		}
	}
	return nil
}

// sleepCtx waits for d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
