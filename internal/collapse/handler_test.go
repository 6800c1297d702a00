package collapse

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// recorder keeps the records it is handed, with the attributes of the
// handler they were written through.
type recorder struct {
	mu    *sync.Mutex
	lines *[]line
	attrs []slog.Attr
}

type line struct {
	at       time.Time
	level    slog.Level
	msg      string
	repeated int
	attrs    map[string]string
}

func newRecorder() *recorder { return &recorder{mu: &sync.Mutex{}, lines: new([]line)} }

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	l := line{at: rec.Time, level: rec.Level, msg: rec.Message, attrs: map[string]string{}}
	add := func(a slog.Attr) bool {
		if a.Key == RepeatedKey {
			l.repeated = int(a.Value.Int64())
		} else {
			l.attrs[a.Key] = a.Value.String()
		}
		return true
	}
	for _, a := range r.attrs {
		add(a)
	}
	rec.Attrs(add)
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.lines = append(*r.lines, l)
	return nil
}

func (r *recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recorder{mu: r.mu, lines: r.lines, attrs: append(append([]slog.Attr(nil), r.attrs...), attrs...)}
}

func (r *recorder) WithGroup(string) slog.Handler { return r }

func (r *recorder) all() []line {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]line(nil), *r.lines...)
}

// clock is a fake clock that a test moves by hand.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }
func newClock() *clock                   { return &clock{now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)} }
func (c *clock) since(t time.Time) float64 {
	return t.Sub(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)).Seconds()
}

// log writes one record at the clock's time, as slog.Logger would.
func log(h slog.Handler, c *clock, level slog.Level, msg string, args ...any) {
	r := slog.NewRecord(c.Now(), level, msg, 0)
	r.Add(args...)
	_ = h.Handle(context.Background(), r)
}

// TestOutageCollapsesToOneLinePerStep: a warning every 100ms for 68s (a
// retry loop through an outage) is written at 0, 1, 3, 7, 15, 31 and
// 63s, each line counting the records suppressed since the last; every
// record is accounted for once Flush has written the last ones.
func TestOutageCollapsesToOneLinePerStep(t *testing.T) {
	c := newClock()
	rec := newRecorder()
	h := NewHandler(rec, Options{Now: c.Now})
	const records = 680
	for i := range records {
		log(h, c, slog.LevelWarn, "kafka reader: Unable to establish connection to consumer group coordinator", "attempt", i)
		c.advance(100 * time.Millisecond)
	}
	h.Flush(context.Background())
	lines := rec.all()
	var at []float64
	accounted := 0
	for _, l := range lines {
		at = append(at, c.since(l.at))
		accounted += 1 + l.repeated
	}
	want := []float64{0, 1, 3, 7, 15, 31, 63, 67.9}
	if len(at) != len(want) {
		t.Fatalf("lines at %v s, want %v", at, want)
	}
	for i := range want {
		if d := at[i] - want[i]; d < -1e-9 || d > 1e-9 {
			t.Fatalf("lines at %v s, want %v", at, want)
		}
	}
	if accounted != records {
		t.Errorf("the lines account for %d records, %d were logged", accounted, records)
	}
	if lines[1].repeated != 9 || lines[1].attrs["attempt"] != "10" {
		t.Errorf("second line %+v, want attempt 10 after 9 suppressed", lines[1])
	}
	// The last line is the last record itself, written by Flush.
	if last := lines[len(lines)-1]; last.attrs["attempt"] != "679" || last.repeated != 679-630-1 {
		t.Errorf("last line %+v, want attempt 679 with the 48 before it since 63s", last)
	}
}

// TestKindsAndLevels: records below the level pass as they come; kinds
// differ by message and by level, and each is collapsed on its own.
func TestKindsAndLevels(t *testing.T) {
	c := newClock()
	rec := newRecorder()
	h := NewHandler(rec, Options{Now: c.Now, First: time.Second})
	for range 5 {
		log(h, c, slog.LevelInfo, "solved")
		log(h, c, slog.LevelWarn, "fetch failed; retrying")
		log(h, c, slog.LevelWarn, "kafka operation failed; retrying")
		log(h, c, slog.LevelError, "fetch failed; retrying")
		c.advance(10 * time.Millisecond)
	}
	count := map[string]int{}
	for _, l := range rec.all() {
		count[l.level.String()+" "+l.msg]++
	}
	want := map[string]int{"INFO solved": 5, "WARN fetch failed; retrying": 1, "WARN kafka operation failed; retrying": 1, "ERROR fetch failed; retrying": 1}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s written %d times, want %d (all: %v)", k, count[k], n, count)
		}
	}
}

// TestSuppressedWrittenByALaterRecord: the repeats of a kind that stopped
// are written once their step has passed, by the next record of any
// kind, with the count of those before the last.
func TestSuppressedWrittenByALaterRecord(t *testing.T) {
	c := newClock()
	rec := newRecorder()
	h := NewHandler(rec, Options{Now: c.Now, First: time.Second})
	for i := range 4 {
		log(h, c, slog.LevelWarn, "liveness check failed", "n", i)
		c.advance(100 * time.Millisecond)
	}
	log(h, c, slog.LevelInfo, "consuming") // before the step: nothing due
	if n := len(rec.all()); n != 2 {
		t.Fatalf("%d lines before the step passed, want the first warning and the info", n)
	}
	c.advance(time.Second)
	log(h, c, slog.LevelInfo, "solved")
	lines := rec.all()
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4: %+v", len(lines), lines)
	}
	if l := lines[2]; l.msg != "liveness check failed" || l.attrs["n"] != "3" || l.repeated != 2 {
		t.Errorf("the suppressed warnings came out as %+v, want the last (n=3) with 2 repeated", l)
	}
	if lines[3].msg != "solved" {
		t.Errorf("the record that found them due came out as %+v", lines[3])
	}
}

// TestQuietKindStartsAgain: a kind quiet for Max is written at once when
// it comes back, and its steps start again from First.
func TestQuietKindStartsAgain(t *testing.T) {
	c := newClock()
	rec := newRecorder()
	h := NewHandler(rec, Options{Now: c.Now, First: time.Second, Max: 4 * time.Second})
	burst := func() {
		for range 40 { // 4s of a record every 100ms: lines at 0, 1 and 3s
			log(h, c, slog.LevelWarn, "fetch failed; retrying")
			c.advance(100 * time.Millisecond)
		}
	}
	burst()
	c.advance(time.Minute)
	burst()
	h.Flush(context.Background())
	var at []float64
	for _, l := range rec.all() {
		at = append(at, c.since(l.at))
	}
	want := []float64{0, 1, 3, 3.9, 64, 65, 67, 67.9}
	if len(at) != len(want) {
		t.Fatalf("lines at %v, want %v", at, want)
	}
	for i := range want {
		if d := at[i] - want[i]; d < -1e-9 || d > 1e-9 {
			t.Fatalf("lines at %v, want %v", at, want)
		}
	}
}

// TestDerivedHandlersShareKinds: loggers derived with With share the
// kinds, and a suppressed record is written through the handler it came
// to, with its attributes.
func TestDerivedHandlersShareKinds(t *testing.T) {
	c := newClock()
	rec := newRecorder()
	h := NewHandler(rec, Options{Now: c.Now, First: time.Second})
	consumer := slog.New(h).With("component", "consumer")
	lease := slog.New(h).With("component", "lease")
	consumer.Warn("kafka operation failed; retrying") // the clock does not move: slog stamps its own time
	lease.Warn("kafka operation failed; retrying")
	lease.Warn("kafka operation failed; retrying")
	c.advance(2 * time.Second)
	consumer.Info("solved")
	lines := rec.all()
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %+v", len(lines), lines)
	}
	if lines[0].attrs["component"] != "consumer" || lines[1].attrs["component"] != "lease" || lines[1].repeated != 1 {
		t.Errorf("lines %+v, want the consumer's, then the lease's last with 1 repeated", lines)
	}
}

// TestConcurrentUse logs from several goroutines under -race; every
// record is accounted for.
func TestConcurrentUse(t *testing.T) {
	rec := newRecorder()
	h := NewHandler(rec, Options{})
	log := slog.New(h)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for range 1000 {
				log.Warn("retrying", "goroutine", g)
			}
		})
	}
	wg.Wait()
	h.Flush(context.Background())
	accounted := 0
	for _, l := range rec.all() {
		accounted += 1 + l.repeated
	}
	if accounted != 4000 {
		t.Errorf("the lines account for %d records of 4000", accounted)
	}
}
