package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is the service's configuration; configs/streamer.yaml documents
// every key and holds the defaults.
type Config struct {
	// Role is RoleAll, RoleScorer or RoleLearner.
	Role           string               `mapstructure:"role"`
	Model          ModelConfig          `mapstructure:"model"`
	Kafka          KafkaConfig          `mapstructure:"kafka"`
	Input          InputConfig          `mapstructure:"input"`
	Output         OutputConfig         `mapstructure:"output"`
	SchemaRegistry SchemaRegistryConfig `mapstructure:"schema_registry"`
	Features       FeaturesConfig       `mapstructure:"features"`
	Limits         LimitsConfig         `mapstructure:"limits"`
	Window         WindowConfig         `mapstructure:"window"`
	Graph          GraphConfig          `mapstructure:"graph"`
	Solver         SolverConfig         `mapstructure:"solver"`
	Schedule       ScheduleConfig       `mapstructure:"schedule"`
	Snapshot       SnapshotConfig       `mapstructure:"snapshot"`
	Join           JoinConfig           `mapstructure:"join"`
	Eval           EvalConfig           `mapstructure:"eval"`
	Active         ActiveConfig         `mapstructure:"active"`
	// Predictions and Review say what a prediction carries and which go
	// to review.
	Predictions PredictionsConfig `mapstructure:"predictions"`
	Review      ReviewConfig      `mapstructure:"review"`
	HTTP        HTTPConfig        `mapstructure:"http"`
	Log         LogConfig         `mapstructure:"log"`
	Shutdown    ShutdownConfig    `mapstructure:"shutdown"`
	Drift       DriftConfig       `mapstructure:"drift"`
}

// The roles a process can take (key role).
const (
	// RoleAll scores, learns and snapshots in one process.
	RoleAll = "all"
	// RoleScorer is one of the replicas of kafka.group on the examples
	// topic: it follows the snapshot topic and scores with the newest
	// model; it keeps no window and solves nothing.
	RoleScorer = "scorer"
	// RoleLearner reads every partition of examples and labels by direct
	// assignment, solves and publishes snapshots stamped with its epoch,
	// while it holds the lease; it publishes no predictions.
	RoleLearner = "learner"
)

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
	Events      string `mapstructure:"events"`
	// Versions holds the announcement of every model version, written
	// before the version scores (snapshot.Announcement).
	Versions string `mapstructure:"versions"`
	// LabelRequests carries the label requests (active.*).
	LabelRequests string `mapstructure:"label_requests"`
	// Review receives a copy of every prediction routed to review.
	Review string `mapstructure:"review"`
}

// PredictionsConfig is the predictions section.
type PredictionsConfig struct {
	// Explain is the number of terms (and neighbours) each published
	// prediction is explained by; 0 explains none.
	Explain int `mapstructure:"explain"`
}

// ReviewConfig is the review section.
type ReviewConfig struct {
	// Thresholds are fixed thresholds, "class=threshold" each.
	Thresholds      []string `mapstructure:"thresholds"`
	TargetPrecision float64  `mapstructure:"target_precision"`
	Grades          int      `mapstructure:"grades"`
}

// thresholds parses review.thresholds.
func (r ReviewConfig) thresholds() (map[string]float64, error) {
	if len(r.Thresholds) == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(r.Thresholds))
	for _, entry := range r.Thresholds {
		class, value, ok := strings.Cut(entry, "=")
		t, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		class = strings.TrimSpace(class)
		switch {
		case !ok || class == "" || err != nil:
			return nil, fmt.Errorf("review.thresholds: %q is not class=threshold", entry)
		case t < 0 || t > 1:
			return nil, fmt.Errorf("review.thresholds: %q: the threshold must be in [0, 1]", entry)
		}
		if _, dup := out[class]; dup {
			return nil, fmt.Errorf("review.thresholds: class %q given twice", class)
		}
		out[class] = t
	}
	return out, nil
}

// TLSConfig is kafka.tls and schema_registry.tls.
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

// InputConfig is the input section: the schema of the input messages.
type InputConfig struct {
	// Format is FormatJSON or FormatAvro.
	Format   string             `mapstructure:"format"`
	Examples ExampleInputConfig `mapstructure:"examples"`
	Labels   LabelInputConfig   `mapstructure:"labels"`
}

// ExampleInputConfig is input.examples: where the fields of an example
// are, by JSON Pointers (ingest.ExampleMapping).
type ExampleInputConfig struct {
	ID        string   `mapstructure:"id"`
	IDNumbers bool     `mapstructure:"id_numbers"`
	TS        string   `mapstructure:"ts"`
	TSNumbers string   `mapstructure:"ts_numbers"`
	Text      []string `mapstructure:"text"`
	Features  string   `mapstructure:"features"`
	// FeatureFields are "name=/pointer".
	FeatureFields    []string `mapstructure:"feature_fields"`
	Indices          string   `mapstructure:"indices"`
	Values           string   `mapstructure:"values"`
	Vector           string   `mapstructure:"vector"`
	Label            string   `mapstructure:"label"`
	TextWithFeatures bool     `mapstructure:"text_with_features"`
}

// LabelInputConfig is input.labels.
type LabelInputConfig struct {
	ID        string `mapstructure:"id"`
	IDNumbers bool   `mapstructure:"id_numbers"`
	Label     string `mapstructure:"label"`
}

// The formats of input and output records (keys input.format and
// output.format).
const (
	FormatJSON = "json"
	// FormatAvro is Avro in Confluent's wire format, under schemas of
	// schema_registry.
	FormatAvro = "avro"
)

// OutputConfig is the output section.
type OutputConfig struct {
	// Format of the predictions: FormatJSON or FormatAvro.
	Format string `mapstructure:"format"`
}

// SchemaRegistryConfig is the schema_registry section.
type SchemaRegistryConfig struct {
	URL          string        `mapstructure:"url"`
	Username     string        `mapstructure:"username"`
	Password     string        `mapstructure:"password"`
	TLS          TLSConfig     `mapstructure:"tls"`
	Timeout      time.Duration `mapstructure:"timeout"`
	CacheSchemas int           `mapstructure:"cache_schemas"`
}

// KeyID is the value of input.examples.id and input.labels.id that takes
// the record key as the id.
const KeyID = "key"

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
	Laplacian      string  `mapstructure:"laplacian"`
	Degree         int     `mapstructure:"degree"`
	Weights        string  `mapstructure:"weights"`
	Sigma          float64 `mapstructure:"sigma"`
	Vote           string  `mapstructure:"vote"`
	VoteWeight     float64 `mapstructure:"vote_weight"`
	VoteNeighbours int     `mapstructure:"vote_neighbours"`
}

// SolverConfig is the solver section.
type SolverConfig struct {
	Algorithm string  `mapstructure:"algorithm"`
	Lambda    float64 `mapstructure:"lambda"`
	LambdaU   float64 `mapstructure:"lambda_u"`
	LambdaI   float64 `mapstructure:"lambda_i"`
	// LambdaSearch is the decades above lambda a two-class solve tries.
	LambdaSearch int     `mapstructure:"lambda_search"`
	R            float64 `mapstructure:"r"`
	MaxSwitch    int     `mapstructure:"max_switch"`
	CostPos      float64 `mapstructure:"cost_pos"`
	CostNeg      float64 `mapstructure:"cost_neg"`
	SRDelta      float64 `mapstructure:"sr_delta"`
	SRGamma      float64 `mapstructure:"sr_gamma"`
	SRK          int     `mapstructure:"sr_k"`
}

// ScheduleConfig is the schedule section.
type ScheduleConfig struct {
	SolveExamples int           `mapstructure:"solve_examples"`
	SolveLabels   int           `mapstructure:"solve_labels"`
	SolveInterval time.Duration `mapstructure:"solve_interval"`
	// SolveShare bounds the fraction of the time the solver is busy while
	// the examples are backlogged: after a solve, the next waits until it
	// is the share of the time since the last one began.
	SolveShare float64 `mapstructure:"solve_share"`
	// InsertShare bounds, the same way, the fraction of the time the
	// learner inserts into the window (online.Learner.Run).
	InsertShare float64 `mapstructure:"insert_share"`
	// LabelsWait bounds how long a due solve waits for label records on
	// the brokers not read yet; 0 does not wait.
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

// ActiveConfig is the active section: label requests.
type ActiveConfig struct {
	// Budget is "0" (none), a fraction of the arriving examples ("2%",
	// "0.02") or a rate ("30/min").
	Budget      string        `mapstructure:"budget"`
	RandomShare float64       `mapstructure:"random_share"`
	Expiry      time.Duration `mapstructure:"expiry"`
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
