package service

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

// A runtime owns the goroutines of one Run, as goka's processor runs its
// parts in one errgroup: every goroutine of the service is a member of
// it, started with its context and waited for by Wait, but those a member
// starts inside itself (a consumer's fetch and publish loops, the HTTP
// server's), which it joins before it returns.
//
// Members come in two kinds. Those of the run (the HTTP server, the role)
// run until Run's context ends. The background members of a role (the
// re-solves, the window's hand-off, the pin follower, the liveness watch,
// a scorer's snapshot follower, a learner's lease watch) run until the
// role's consumer has stopped, so that what it drains is still solved
// for, its snapshot published and pin orders obeyed meanwhile:
// stopBackground ends them once the consumer has returned.
//
// A member returns nil when its context ends, and retries on its own
// what is transient. An error means it stopped for good: the run ends
// (ctx) as at shutdown, the consumer drains, every other member stops,
// and Wait returns that error, the first of them.
type runtime struct {
	ctx  context.Context // the run's: Run's context, ended early by a member's failure
	stop context.CancelCauseFunc
	run  errgroup.Group

	bg         context.Context // the background members': ends at stopBackground
	stopBG     context.CancelFunc
	background errgroup.Group

	mu  sync.Mutex
	err error // the first member's error
}

func newRuntime(parent context.Context) *runtime {
	ctx, stop := context.WithCancelCause(parent)
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	return &runtime{ctx: ctx, stop: stop, bg: bg, stopBG: stopBG}
}

// Go runs f as a member of the run, on the run's context. Its error is
// returned as it is: it says what failed.
func (rt *runtime) Go(f func(ctx context.Context) error) {
	rt.run.Go(func() error { return rt.ended(f(rt.ctx)) })
}

// GoBackground runs f, named name in its error, as a background member:
// its context ends at stopBackground.
func (rt *runtime) GoBackground(name string, f func(ctx context.Context) error) {
	rt.background.Go(func() error {
		err := f(rt.bg)
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
		return rt.ended(err)
	})
}

// ended records how a member ended: an error ends the run.
func (rt *runtime) ended(err error) error {
	if err == nil {
		return nil
	}
	rt.mu.Lock()
	if rt.err == nil {
		rt.err = err
	}
	rt.mu.Unlock()
	rt.stop(err)
	return err
}

// failed reports whether a member stopped for good.
func (rt *runtime) failed() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.err != nil
}

// end ends the run without an error: what runs on its context stops.
func (rt *runtime) end() { rt.stop(nil) }

// stopBackground ends the background members and waits for them.
func (rt *runtime) stopBackground() {
	rt.stopBG()
	rt.background.Wait() //nolint:errcheck // ended keeps the first error
}

// Wait waits for every member, background ones included, and returns the
// first error of one, nil when none failed.
func (rt *runtime) Wait() error {
	rt.run.Wait() //nolint:errcheck // ended keeps the first error
	rt.stopBackground()
	rt.end()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.err
}
