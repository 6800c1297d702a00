package collapse

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Options set up a Handler. Zero fields mean the defaults beside them.
type Options struct {
	// Level is the least level collapsed; records below it are written
	// as they come. nil means slog.LevelWarn.
	Level slog.Leveler
	// First is the first step: after the first record of a kind, the
	// next is written no sooner than First later, the one after no
	// sooner than 2·First, and so on up to Max. A kind quiet for Max
	// starts again from First. 0 means 1s; Max 0 means 1 minute.
	First time.Duration
	Max   time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Level == nil {
		o.Level = slog.LevelWarn
	}
	if o.First <= 0 {
		o.First = time.Second
	}
	if o.Max <= 0 {
		o.Max = time.Minute
	}
	o.Max = max(o.Max, o.First)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// RepeatedKey is the attribute that counts the records of a line's kind
// not written since the kind's previous line.
const RepeatedKey = "repeated"

// maxKinds bounds the kinds followed at once: a message that varies with
// every record (an offset in it) would otherwise grow the map; records of
// kinds beyond it are written as they come.
const maxKinds = 1024

// Handler collapses repeated records of one kind into one line per
// step, before the handler it wraps. Handlers derived by WithAttrs and
// WithGroup share its kinds. It is safe for concurrent use.
type Handler struct {
	inner slog.Handler
	kinds *kinds
}

// NewHandler returns a Handler that writes to inner.
func NewHandler(inner slog.Handler, opts Options) *Handler {
	return &Handler{inner: inner, kinds: &kinds{opts: opts.withDefaults(), byKey: map[key]*kind{}}}
}

// Enabled reports whether inner handles records of level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle writes r unless it repeats a kind whose step has not passed,
// after the suppressed records of other kinds that fell due.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	now := h.kinds.opts.Now()
	write, repeated, due := h.kinds.admit(h.inner, r, now)
	writeDue(ctx, due)
	if !write {
		return nil
	}
	if repeated > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int(RepeatedKey, repeated))
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs returns a Handler of inner's WithAttrs that shares h's kinds.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs), kinds: h.kinds}
}

// WithGroup returns a Handler of inner's WithGroup that shares h's kinds.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), kinds: h.kinds}
}

// Flush writes the last suppressed record of every kind that has some,
// such as at the end of a run, when no later record would.
func (h *Handler) Flush(ctx context.Context) {
	writeDue(ctx, h.kinds.take(h.kinds.opts.Now(), func(*kind) bool { return true }))
}

// pending is a suppressed record to write, and where.
type pending struct {
	to  slog.Handler
	rec slog.Record
}

func writeDue(ctx context.Context, due []pending) {
	for _, p := range due {
		_ = p.to.Handle(ctx, p.rec)
	}
}

type key struct {
	level slog.Level
	msg   string
}

// kind is what the handler knows of one kind of record.
type kind struct {
	step       time.Duration // between the last line written and the next
	next       time.Time     // the next record is written at or after it
	seen       time.Time     // of the last record
	suppressed int           // records not written since the last line
	last       pending       // the last of them
}

type kinds struct {
	opts  Options
	mu    sync.Mutex
	byKey map[key]*kind
}

// admit reports whether to write r, with how many records of its kind
// were suppressed before it, and returns the suppressed records of other
// kinds that fell due.
func (ks *kinds) admit(to slog.Handler, r slog.Record, now time.Time) (write bool, repeated int, due []pending) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	collapsed := r.Level >= ks.opts.Level.Level()
	kk := key{r.Level, r.Message}
	k := ks.byKey[kk]
	// r's own kind is left to r, its line counting the suppressed records,
	// unless the kind was quiet for Max: r then starts it again.
	due = ks.takeLocked(now, func(o *kind) bool {
		return (o != k || !collapsed || now.Sub(o.seen) >= ks.opts.Max) && !now.Before(o.next)
	})
	ks.forgetQuiet(now)
	if !collapsed {
		return true, 0, due
	}
	k = ks.byKey[kk] // forgotten when quiet
	switch {
	case k == nil && len(ks.byKey) >= maxKinds:
		return true, 0, due
	case k == nil:
		ks.byKey[kk] = &kind{step: ks.opts.First, next: now.Add(ks.opts.First), seen: now}
		return true, 0, due
	}
	k.seen = now
	if now.Before(k.next) {
		k.suppressed++
		k.last = pending{to: to, rec: r.Clone()}
		return false, 0, due
	}
	repeated = k.suppressed
	ks.written(k, now)
	return true, repeated, due
}

// written steps k on after one of its lines was written at now.
func (ks *kinds) written(k *kind, now time.Time) {
	k.suppressed, k.last = 0, pending{}
	k.step = min(2*k.step, ks.opts.Max)
	k.next = now.Add(k.step)
}

// takeLocked returns the last suppressed record of each kind that has
// some and that due selects, counting the others in RepeatedKey, in the
// order of their times, and steps those kinds on as written at now. ks.mu
// is held.
func (ks *kinds) takeLocked(now time.Time, due func(*kind) bool) []pending {
	var out []pending
	for _, k := range ks.byKey {
		if k.suppressed == 0 || !due(k) {
			continue
		}
		p := k.last
		if k.suppressed > 1 {
			p.rec.AddAttrs(slog.Int(RepeatedKey, k.suppressed-1))
		}
		out = append(out, p)
		ks.written(k, now)
	}
	slices.SortFunc(out, func(a, b pending) int { return a.rec.Time.Compare(b.rec.Time) })
	return out
}

func (ks *kinds) take(now time.Time, due func(*kind) bool) []pending {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.takeLocked(now, due)
}

// forgetQuiet forgets the kinds that have nothing suppressed and were
// quiet for Max: their next record is written at once, a new start.
func (ks *kinds) forgetQuiet(now time.Time) {
	for kk, k := range ks.byKey {
		if k.suppressed == 0 && now.Sub(k.seen) >= ks.opts.Max {
			delete(ks.byKey, kk)
		}
	}
}
