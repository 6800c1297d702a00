package config

import (
	"fmt"
	"strconv"
	"time"
)

// Config is the service's configuration; configs/streamer.yaml documents
// every key and holds the defaults.
type Config struct {
	// Role is RoleAll, RoleScorer or RoleLearner.
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
	Drift    DriftConfig    `mapstructure:"drift"`
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
