package anngraph

import (
	"fmt"
	"runtime"
	"time"
)

// Metric is the distance the neighbours are chosen by.
type Metric int

const (
	// Cosine is the cosine distance 1 - cos(x, y), in [0, 2]. A zero
	// vector has cosine 0 with everything, so distance 1.
	Cosine Metric = iota
	// Euclidean is the Euclidean distance ‖x - y‖.
	Euclidean
)

func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case Euclidean:
		return "euclidean"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// ParseMetric returns the metric named by s ("cosine" or "euclidean").
func ParseMetric(s string) (Metric, error) {
	switch s {
	case "cosine":
		return Cosine, nil
	case "euclidean":
		return Euclidean, nil
	}
	return 0, fmt.Errorf("unknown metric %q (want cosine or euclidean)", s)
}

// Defaults of the zero Config fields.
const (
	DefaultK              = 10
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 100
)

// Config describes a Window. Its zero fields, except MaxExamples, mean the
// documented defaults.
type Config struct {
	// MaxExamples is the window size by count: inserting into a full
	// window evicts the oldest point first. It must be positive.
	MaxExamples int
	// MaxAge bounds the window by event time: an insert evicts the points
	// whose time is before the newest time seen minus MaxAge. 0 means no
	// age limit.
	MaxAge time.Duration
	// K is the number of neighbours listed per point; 0 means 10.
	K int
	// ListDepth is the number of candidates kept per kNN list, of which
	// the nearest K are the point's neighbours; the rest stand in when a
	// neighbour is evicted, so a list rarely needs a search to be
	// repaired. 0 means 2K; values below K are raised to K. Exhaustive
	// windows keep K: a list is recomputed whenever it loses an entry,
	// which keeps it exact.
	ListDepth int
	// Metric is the distance; the zero value is Cosine.
	Metric Metric
	// M is the number of links per point and layer of the navigable
	// graph (2M on the bottom layer); 0 means 16.
	M int
	// EfConstruction is the size of the candidate list of the search
	// that inserts a point; it bounds how well the new point's kNN list
	// and the lists it enters are found. 0 means 200; values below
	// ListDepth are raised to it.
	EfConstruction int
	// EfSearch is the candidate list size of Window.Search and of the
	// search that repairs a kNN list that fell below K entries. 0 means
	// 100; values below K are raised to K.
	EfSearch int
	// Exhaustive replaces the navigable graph by brute force: every kNN
	// list is exact at all times. Each insert costs O(n) distances; use
	// it for tests and small windows.
	Exhaustive bool
	// Seed drives the random levels of the navigable graph. The same
	// Seed and the same sequence of inserts give the same state.
	Seed uint64
	// InsertWorkers is the number of goroutines InsertBatch places a
	// chunk's points with; 0 means runtime.GOMAXPROCS. It changes how
	// fast a batch goes in, never what the window holds afterwards.
	InsertWorkers int
}

// Validate reports the first field of c that is out of range, as a
// *ConfigError.
func (c Config) Validate() error {
	switch {
	case c.MaxExamples <= 0:
		return &ConfigError{"MaxExamples", c.MaxExamples, "must be positive"}
	case c.MaxExamples > maxSlots:
		return &ConfigError{"MaxExamples", c.MaxExamples, fmt.Sprintf("must be at most %d", maxSlots)}
	case c.MaxAge < 0:
		return &ConfigError{"MaxAge", c.MaxAge, "must not be negative"}
	case c.K < 0:
		return &ConfigError{"K", c.K, "must not be negative"}
	case c.ListDepth < 0:
		return &ConfigError{"ListDepth", c.ListDepth, "must not be negative"}
	case c.ListDepth > maxListDepth:
		return &ConfigError{"ListDepth", c.ListDepth, fmt.Sprintf("must be at most %d", maxListDepth)}
	case c.K > maxListDepth:
		return &ConfigError{"K", c.K, fmt.Sprintf("must be at most %d", maxListDepth)}
	case c.Metric != Cosine && c.Metric != Euclidean:
		return &ConfigError{"Metric", int(c.Metric), "must be Cosine or Euclidean"}
	case c.M < 0 || c.M == 1:
		return &ConfigError{"M", c.M, "must be 0 (default) or at least 2"}
	case c.M > maxM:
		return &ConfigError{"M", c.M, fmt.Sprintf("must be at most %d", maxM)}
	case c.EfConstruction < 0:
		return &ConfigError{"EfConstruction", c.EfConstruction, "must not be negative"}
	case c.EfSearch < 0:
		return &ConfigError{"EfSearch", c.EfSearch, "must not be negative"}
	case c.InsertWorkers < 0:
		return &ConfigError{"InsertWorkers", c.InsertWorkers, "must not be negative"}
	}
	return nil
}

// ConfigError names the field of a Config or LaplacianConfig that is out
// of range, so that a caller can name the setting it came from.
type ConfigError struct {
	// Field is the field's name: "K" of Config, "Laplacian.Sigma" of
	// LaplacianConfig.
	Field  string
	Value  any
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("anngraph: %s = %v, %s", e.Field, e.Value, e.Reason)
}

const (
	maxSlots     = 1<<31 - 1
	maxListDepth = 1 << 12
	maxM         = 1 << 10
)

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.ListDepth == 0 {
		c.ListDepth = 2 * c.K
	}
	c.ListDepth = max(c.ListDepth, c.K)
	if c.Exhaustive {
		c.ListDepth = c.K
	}
	if c.M == 0 {
		c.M = DefaultM
	}
	if c.EfConstruction == 0 {
		c.EfConstruction = DefaultEfConstruction
	}
	c.EfConstruction = max(c.EfConstruction, c.ListDepth)
	if c.EfSearch == 0 {
		c.EfSearch = DefaultEfSearch
	}
	c.EfSearch = max(c.EfSearch, c.K)
	if c.InsertWorkers == 0 {
		c.InsertWorkers = runtime.GOMAXPROCS(0)
	}
	return c
}
