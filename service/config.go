package service

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"streamer/anngraph"
	"streamer/brokers"
	"streamer/configs"
)

// Config is the service's configuration; configs/streamer.yaml documents
// every key and holds the defaults.
type Config struct {
	// Role is all, scorer or learner (roles.go).
	Role     string         `mapstructure:"role"`
	Model    ModelConfig    `mapstructure:"model"`
	Kafka    KafkaConfig    `mapstructure:"kafka"`
	Features FeaturesConfig `mapstructure:"features"`
	Limits   LimitsConfig   `mapstructure:"limits"`
	Window   WindowConfig   `mapstructure:"window"`
	Graph    GraphConfig    `mapstructure:"graph"`
	Solver   SolverConfig   `mapstructure:"solver"`
	Schedule ScheduleConfig `mapstructure:"schedule"`
	Snapshot SnapshotConfig `mapstructure:"snapshot"`
	Join     JoinConfig     `mapstructure:"join"`
	Eval     EvalConfig     `mapstructure:"eval"`
	HTTP     HTTPConfig     `mapstructure:"http"`
	Log      LogConfig      `mapstructure:"log"`
	Shutdown ShutdownConfig `mapstructure:"shutdown"`
}

// ModelConfig names the model and what it may start from.
type ModelConfig struct {
	Name string `mapstructure:"name"`
	// SeedFile is a snapshot file to start from when there is no snapshot
	// of the model's own; it is only read.
	SeedFile string `mapstructure:"seed_file"`
}

// KafkaConfig is the kafka section.
type KafkaConfig struct {
	Brokers          []string      `mapstructure:"brokers"`
	Group            string        `mapstructure:"group"`
	Start            string        `mapstructure:"start"`
	Topics           TopicsConfig  `mapstructure:"topics"`
	Partitions       int           `mapstructure:"partitions"`
	MaxMessageBytes  int           `mapstructure:"max_message_bytes"`
	BatchTimeout     time.Duration `mapstructure:"batch_timeout"`
	BatchSize        int           `mapstructure:"batch_size"`
	CloseTimeout     time.Duration `mapstructure:"close_timeout"`
	SessionTimeout   time.Duration `mapstructure:"session_timeout"`
	RebalanceTimeout time.Duration `mapstructure:"rebalance_timeout"`
	RetryBackoff     time.Duration `mapstructure:"retry_backoff"`
	StallTimeout     time.Duration `mapstructure:"stall_timeout"`
	TLS              TLSConfig     `mapstructure:"tls"`
	SASL             SASLConfig    `mapstructure:"sasl"`
}

// TopicsConfig names the topics.
type TopicsConfig struct {
	Examples    string `mapstructure:"examples"`
	Labels      string `mapstructure:"labels"`
	Predictions string `mapstructure:"predictions"`
	Snapshots   string `mapstructure:"snapshots"`
	Control     string `mapstructure:"control"`
	ExamplesDLQ string `mapstructure:"examples_dlq"`
	LabelsDLQ   string `mapstructure:"labels_dlq"`
	Lease       string `mapstructure:"lease"`
}

// TLSConfig is kafka.tls.
type TLSConfig struct {
	Enable             bool   `mapstructure:"enable"`
	CAFile             string `mapstructure:"ca_file"`
	CertFile           string `mapstructure:"cert_file"`
	KeyFile            string `mapstructure:"key_file"`
	ServerName         string `mapstructure:"server_name"`
	InsecureSkipVerify bool   `mapstructure:"insecure_skip_verify"`
}

// SASLConfig is kafka.sasl.
type SASLConfig struct {
	Mechanism string `mapstructure:"mechanism"`
	Username  string `mapstructure:"username"`
	Password  string `mapstructure:"password"`
}

// FeaturesConfig is the features section.
type FeaturesConfig struct {
	Dim       int  `mapstructure:"dim"`
	DenseDim  int  `mapstructure:"dense_dim"`
	Signed    bool `mapstructure:"signed"`
	Normalize bool `mapstructure:"normalize"`
	// Kernel, Landmarks and Gamma describe the Nyström kernel map.
	Kernel    string  `mapstructure:"kernel"`
	Landmarks int     `mapstructure:"landmarks"`
	Gamma     float64 `mapstructure:"gamma"`
}

// LimitsConfig is the limits section.
type LimitsConfig struct {
	MaxMessageBytes   int      `mapstructure:"max_message_bytes"`
	MaxIDBytes        int      `mapstructure:"max_id_bytes"`
	MaxTextBytes      int      `mapstructure:"max_text_bytes"`
	MaxFeatures       int      `mapstructure:"max_features"`
	MaxClassNameBytes int      `mapstructure:"max_class_name_bytes"`
	Classes           []string `mapstructure:"classes"`
	// MaxBatchExamples and MaxRequestBytes bound a POST /v1/predict.
	MaxBatchExamples int `mapstructure:"max_batch_examples"`
	MaxRequestBytes  int `mapstructure:"max_request_bytes"`
}

// WindowConfig is the window section.
type WindowConfig struct {
	MaxExamples    int           `mapstructure:"max_examples"`
	MaxAge         time.Duration `mapstructure:"max_age"`
	K              int           `mapstructure:"k"`
	Metric         string        `mapstructure:"metric"`
	M              int           `mapstructure:"m"`
	EfConstruction int           `mapstructure:"ef_construction"`
	EfSearch       int           `mapstructure:"ef_search"`
	Exhaustive     bool          `mapstructure:"exhaustive"`
	InsertWorkers  int           `mapstructure:"insert_workers"`
	Queue          int           `mapstructure:"queue"`
	Sample         string        `mapstructure:"sample"`
}

// sample returns window.sample as a fraction, 0 for auto.
func (w WindowConfig) sample() (float64, error) {
	if w.Sample == "auto" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(w.Sample, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, fmt.Errorf("window.sample %q: want auto or a fraction in (0, 1]", w.Sample)
	}
	return f, nil
}

// GraphConfig is the graph section.
type GraphConfig struct {
	Laplacian string  `mapstructure:"laplacian"`
	Degree    int     `mapstructure:"degree"`
	Weights   string  `mapstructure:"weights"`
	Sigma     float64 `mapstructure:"sigma"`
}

// SolverConfig is the solver section.
type SolverConfig struct {
	Algorithm string  `mapstructure:"algorithm"`
	Lambda    float64 `mapstructure:"lambda"`
	LambdaU   float64 `mapstructure:"lambda_u"`
	LambdaI   float64 `mapstructure:"lambda_i"`
	R         float64 `mapstructure:"r"`
	MaxSwitch int     `mapstructure:"max_switch"`
	CostPos   float64 `mapstructure:"cost_pos"`
	CostNeg   float64 `mapstructure:"cost_neg"`
	SRDelta   float64 `mapstructure:"sr_delta"`
	SRGamma   float64 `mapstructure:"sr_gamma"`
	SRK       int     `mapstructure:"sr_k"`
}

// ScheduleConfig is the schedule section.
type ScheduleConfig struct {
	SolveExamples int           `mapstructure:"solve_examples"`
	SolveLabels   int           `mapstructure:"solve_labels"`
	SolveInterval time.Duration `mapstructure:"solve_interval"`
	// SolveShare bounds the fraction of the time the solver is busy while
	// the examples are backlogged: after a solve, the next waits until it
	// is the share of the time since the last one began (service/pace.go).
	SolveShare float64 `mapstructure:"solve_share"`
	// InsertShare bounds, the same way, the fraction of the time the
	// learner inserts into the window (online.Learner.Run).
	InsertShare float64 `mapstructure:"insert_share"`
	// LabelsWait bounds how long a due solve waits for label records on
	// the brokers not read yet (service/labelwait.go); 0 does not wait.
	LabelsWait time.Duration `mapstructure:"labels_wait"`
}

// SnapshotConfig is the snapshot section.
type SnapshotConfig struct {
	EverySolves int           `mapstructure:"every_solves"`
	Every       time.Duration `mapstructure:"every"`
	File        string        `mapstructure:"file"`
	Restore     bool          `mapstructure:"restore"`
	// HistoryTopic keeps every snapshot for HistoryRetention; "" keeps
	// none.
	HistoryTopic     string        `mapstructure:"history_topic"`
	HistoryRetention time.Duration `mapstructure:"history_retention"`
}

// JoinConfig is the join section.
type JoinConfig struct {
	PendingLabels  int `mapstructure:"pending_labels"`
	RecentExamples int `mapstructure:"recent_examples"`
}

// EvalConfig is the eval section.
type EvalConfig struct {
	Baseline bool `mapstructure:"baseline"`
	Horizon  int  `mapstructure:"horizon"`
}

// HTTPConfig is the http section.
type HTTPConfig struct {
	Listen string `mapstructure:"listen"`
}

// LogConfig is the log section.
type LogConfig struct {
	Level  string `mapstructure:"level"`
	Format string `mapstructure:"format"`
}

// ShutdownConfig is the shutdown section.
type ShutdownConfig struct {
	Timeout time.Duration `mapstructure:"timeout"`
}

// EnvPrefix prefixes the environment variables that override keys.
const EnvPrefix = "STREAMER"

// LoadConfig reads the defaults (configs/streamer.yaml), then the file at
// path when it is not empty, then STREAMER_* environment variables, then
// the key=value overrides, and validates the result. Unknown keys and bad
// values are errors that name the key.
func LoadConfig(path string, overrides []string) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(configs.Default())); err != nil {
		return Config{}, fmt.Errorf("default configuration: %w", err)
	}
	known := map[string]bool{}
	for _, k := range v.AllKeys() {
		known[k] = true
	}
	if path != "" {
		if err := mergeFile(v, path, known); err != nil {
			return Config{}, err
		}
	}
	if err := checkEnvironment(os.Environ(), known); err != nil {
		return Config{}, err
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for _, o := range overrides {
		key, value, ok := strings.Cut(o, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok || !known[key] {
			return Config{}, fmt.Errorf("--set %q: want key=value with a key of configs/streamer.yaml", o)
		}
		v.Set(key, value)
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// envNotKeys are STREAMER_* variables that are not configuration keys.
var envNotKeys = map[string]bool{
	"STREAMER_CRASH_EXAMPLES": true, // the size of service's crash test
	"STREAMER_SCALE_RATE":     true, // the rate of service's scale-out test
}

// checkEnvironment refuses a STREAMER_* variable that is the variable of
// no key: a typo would otherwise be ignored silently, where --set and the
// file refuse it.
func checkEnvironment(environ []string, known map[string]bool) error {
	names := map[string]bool{}
	for k := range known {
		names[EnvPrefix+"_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_"))] = true
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix+"_") && !names[name] && !envNotKeys[name] {
			return fmt.Errorf("environment variable %s is the variable of no key of configs/streamer.yaml", name)
		}
	}
	return nil
}

func mergeFile(v *viper.Viper, path string, known map[string]bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read configuration: %w", err)
	}
	if err := yaml.Unmarshal(data, new(any)); err != nil {
		return fmt.Errorf("configuration %s: %w", path, yamlSyntaxError(data, err))
	}
	file := viper.New()
	file.SetConfigFile(path)
	if err := file.ReadInConfig(); err != nil {
		return fmt.Errorf("read configuration %s: %w", path, err)
	}
	for _, k := range file.AllKeys() {
		if !known[k] {
			return fmt.Errorf("configuration %s: unknown key %s", path, k)
		}
	}
	v.SetConfigFile(path)
	if err := v.MergeInConfig(); err != nil {
		return fmt.Errorf("read configuration %s: %w", path, err)
	}
	return nil
}

// yamlSyntaxError restates err with the line where data stops being YAML.
// The YAML parser reports a parse error at the line where its context
// began, counted from 0 (a flow list left open on line 2 is "line 1"):
// the first line after which no longer prefix of the file parses is where
// the text went wrong.
func yamlSyntaxError(data []byte, err error) error {
	lines := bytes.SplitAfter(data, []byte("\n"))
	bad := 0
	for n := len(lines); n > 0; n-- {
		if yaml.Unmarshal(bytes.Join(lines[:n], nil), new(any)) == nil {
			break
		}
		bad = n
	}
	msg := yamlLine.ReplaceAllString(err.Error(), "")
	if bad == 0 {
		return errors.New(msg)
	}
	return fmt.Errorf("line %d: %s", bad, strings.TrimPrefix(msg, "yaml: "))
}

var yamlLine = regexp.MustCompile(`line \d+: `)

// Validate checks every value and names the first bad key.
func (c Config) Validate() error {
	checks := []struct {
		ok  bool
		key string
		msg string
	}{
		{c.Role == RoleAll || c.Role == RoleScorer || c.Role == RoleLearner, "role", "must be all, scorer or learner"},
		{c.Model.Name != "", "model.name", "must not be empty"},
		{c.Model.SeedFile == "" || c.Model.SeedFile != c.Snapshot.File, "model.seed_file", "must not be snapshot.file, which the service overwrites"},
		{c.Kafka.Group != "", "kafka.group", "must not be empty"},
		{c.Kafka.Start == "earliest" || c.Kafka.Start == "latest", "kafka.start", "must be earliest or latest"},
		{c.Kafka.Topics.Examples != "" && c.Kafka.Topics.Labels != "" && c.Kafka.Topics.Predictions != "" &&
			c.Kafka.Topics.Snapshots != "" && c.Kafka.Topics.ExamplesDLQ != "" && c.Kafka.Topics.LabelsDLQ != "" &&
			c.Kafka.Topics.Control != "" && c.Kafka.Topics.Lease != "", "kafka.topics", "every topic needs a name"},
		{c.Kafka.Partitions > 0, "kafka.partitions", "must be > 0"},
		{c.Kafka.MaxMessageBytes >= 1024, "kafka.max_message_bytes", "must be at least 1024"},
		{c.Kafka.BatchTimeout > 0, "kafka.batch_timeout", "must be > 0"},
		{c.Kafka.BatchSize > 0, "kafka.batch_size", "must be > 0"},
		{c.Kafka.CloseTimeout > 0, "kafka.close_timeout", "must be > 0"},
		{c.Kafka.SessionTimeout >= time.Second, "kafka.session_timeout", "must be at least 1s"},
		{c.Kafka.RebalanceTimeout >= time.Second, "kafka.rebalance_timeout", "must be at least 1s"},
		{c.Kafka.RetryBackoff > 0, "kafka.retry_backoff", "must be > 0"},
		// A restarted process waits up to a session (or rebalance) timeout
		// for its partitions; that wait is not a stall.
		{c.Kafka.StallTimeout > max(c.Kafka.SessionTimeout, c.Kafka.RebalanceTimeout), "kafka.stall_timeout",
			"must be longer than kafka.session_timeout and kafka.rebalance_timeout"},
		{c.Features.Dim > 0 && c.Features.Dim <= 1<<31, "features.dim", "must be in [1, 2^31]"},
		{c.Features.DenseDim >= 0, "features.dense_dim", "must be >= 0"},
		{c.Limits.MaxMessageBytes > 0, "limits.max_message_bytes", "must be > 0"},
		{c.Limits.MaxIDBytes > 0, "limits.max_id_bytes", "must be > 0"},
		{c.Limits.MaxTextBytes > 0, "limits.max_text_bytes", "must be > 0"},
		{c.Limits.MaxFeatures > 0, "limits.max_features", "must be > 0"},
		{c.Limits.MaxClassNameBytes > 0, "limits.max_class_name_bytes", "must be > 0"},
		{c.Limits.MaxBatchExamples > 0, "limits.max_batch_examples", "must be > 0"},
		{c.Limits.MaxRequestBytes >= c.Limits.MaxMessageBytes, "limits.max_request_bytes", "must be at least limits.max_message_bytes"},
		{c.Window.MaxExamples > 1, "window.max_examples", "must be > 1"},
		{c.Window.MaxAge >= 0, "window.max_age", "must be >= 0"},
		{c.Window.K > 0, "window.k", "must be > 0"},
		{c.Window.Metric == "cosine" || c.Window.Metric == "euclidean", "window.metric", "must be cosine or euclidean"},
		{c.Window.M >= 2, "window.m", "must be >= 2"},
		{c.Window.EfConstruction > 0, "window.ef_construction", "must be > 0"},
		{c.Window.EfSearch > 0, "window.ef_search", "must be > 0"},
		{c.Window.InsertWorkers >= 0, "window.insert_workers", "must be >= 0"},
		{c.Graph.Laplacian == "normalized" || c.Graph.Laplacian == "unnormalized", "graph.laplacian", "must be normalized or unnormalized"},
		{c.Graph.Degree >= 0, "graph.degree", "must be >= 0"},
		{c.Graph.Weights == "heat" || c.Graph.Weights == "cosine" || c.Graph.Weights == "binary", "graph.weights", "must be heat, cosine or binary"},
		{c.Graph.Sigma >= 0, "graph.sigma", "must be >= 0"},
		{c.Schedule.SolveExamples > 0, "schedule.solve_examples", "must be > 0"},
		{c.Schedule.SolveLabels > 0, "schedule.solve_labels", "must be > 0"},
		{c.Schedule.SolveInterval > 0, "schedule.solve_interval", "must be > 0"},
		{c.Schedule.SolveShare > 0 && c.Schedule.SolveShare <= 1, "schedule.solve_share", "must be in (0, 1]"},
		{c.Schedule.InsertShare > 0 && c.Schedule.InsertShare <= 1, "schedule.insert_share", "must be in (0, 1]"},
		{c.Schedule.LabelsWait >= 0, "schedule.labels_wait", "must be >= 0"},
		{c.Snapshot.EverySolves > 0, "snapshot.every_solves", "must be > 0"},
		{c.Snapshot.Every > 0, "snapshot.every", "must be > 0"},
		{c.Snapshot.HistoryTopic == "" || c.Snapshot.HistoryRetention > 0, "snapshot.history_retention", "must be > 0"},
		{c.Snapshot.HistoryTopic != c.Kafka.Topics.Snapshots, "snapshot.history_topic", "must not be kafka.topics.snapshots, which is compacted"},
		{c.Kafka.Topics.Control != c.Kafka.Topics.Snapshots && c.Kafka.Topics.Control != c.Snapshot.HistoryTopic, "kafka.topics.control",
			"must not be a snapshot topic"},
		{c.Join.PendingLabels > 0, "join.pending_labels", "must be > 0"},
		{c.Join.RecentExamples > 0, "join.recent_examples", "must be > 0"},
		{c.Eval.Horizon > 0, "eval.horizon", "must be > 0"},
		{c.HTTP.Listen != "", "http.listen", "must not be empty"},
		{c.Log.Level == "debug" || c.Log.Level == "info" || c.Log.Level == "warn" || c.Log.Level == "error", "log.level", "must be debug, info, warn or error"},
		{c.Log.Format == "json" || c.Log.Format == "text", "log.format", "must be json or text"},
		{c.Shutdown.Timeout > 0, "shutdown.timeout", "must be > 0"},
		{c.Features.Kernel == "none" || c.Features.Kernel == "rbf", "features.kernel", "must be none or rbf"},
		{c.Window.Queue > 0, "window.queue", "must be > 0"},
		{c.Features.Landmarks > 0, "features.landmarks", "must be > 0"},
		{c.Features.Gamma >= 0, "features.gamma", "must be >= 0 (0 is the median heuristic)"},
	}
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("configuration: %s %s", ch.key, ch.msg)
		}
	}
	if err := c.Brokers().Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if _, err := c.Window.sample(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return c.validateLayers()
}

// validateLayers runs the checks of the packages the configuration is
// given to (ranges that only they know, combinations of values) on what
// they will be given, and names in their errors the key the user wrote:
// the service must not fail at start with a message about a Go field.
func (c Config) validateLayers() error {
	pc, err := c.Pipeline()
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	for _, err := range []error{pc.Learner.Window.Validate(), pc.Learner.Graph.Validate()} {
		var fe *anngraph.ConfigError
		if errors.As(err, &fe) && graphKey(fe.Field) != "" {
			return fmt.Errorf("configuration: %s %s, got %v", graphKey(fe.Field), fe.Reason, fe.Value)
		}
		if err != nil {
			return fmt.Errorf("configuration: window: %w", err)
		}
	}
	// online names the fields of Params and kernel.Config as the keys of
	// the solver section and the kernel keys of the features section.
	if err := pc.Learner.Params.Validate(); err != nil {
		return fmt.Errorf("configuration: solver.%w", err)
	}
	if err := pc.Learner.Kernel.Validate(); err != nil {
		return fmt.Errorf("configuration: features.%w", err)
	}
	if err := pc.Decoder.Featurizer.Validate(); err != nil {
		return fmt.Errorf("configuration: features: %w", err)
	}
	// The checks above leave only the classes for Limits to refuse.
	if err := pc.Decoder.Limits.Validate(); err != nil {
		return fmt.Errorf("configuration: limits.classes: %w", err)
	}
	if err := pc.Join.Validate(); err != nil {
		return fmt.Errorf("configuration: join: %w", err)
	}
	return nil
}

// graphKey returns the key that a field of anngraph.Config or
// LaplacianConfig comes from, or "" for a field the configuration does not
// set.
func graphKey(field string) string {
	switch field {
	case "MaxExamples":
		return "window.max_examples"
	case "MaxAge":
		return "window.max_age"
	case "K":
		return "window.k"
	case "Metric":
		return "window.metric"
	case "M":
		return "window.m"
	case "EfConstruction":
		return "window.ef_construction"
	case "EfSearch":
		return "window.ef_search"
	case "InsertWorkers":
		return "window.insert_workers"
	case "Laplacian.Degree":
		return "graph.degree"
	case "Laplacian.Weights":
		return "graph.weights"
	case "Laplacian.Sigma":
		return "graph.sigma"
	}
	return ""
}

// Brokers returns the connection settings.
func (c Config) Brokers() brokers.Config {
	return brokers.Config{
		Brokers: c.Kafka.Brokers,
		TLS: brokers.TLSConfig{
			Enable: c.Kafka.TLS.Enable, CAFile: c.Kafka.TLS.CAFile, CertFile: c.Kafka.TLS.CertFile,
			KeyFile: c.Kafka.TLS.KeyFile, ServerName: c.Kafka.TLS.ServerName, InsecureSkipVerify: c.Kafka.TLS.InsecureSkipVerify,
		},
		SASL: brokers.SASLConfig{Mechanism: c.Kafka.SASL.Mechanism, Username: c.Kafka.SASL.Username, Password: c.Kafka.SASL.Password},
	}
}
