package config

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"streamer/anngraph"
	"streamer/brokers"
)

// maxExplain bounds predictions.explain: an explanation is for people to
// read.
const maxExplain = 100

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
			c.Kafka.Topics.Control != "" && c.Kafka.Topics.Lease != "" && c.Kafka.Topics.Versions != "" && c.Kafka.Topics.Review != "" && c.Kafka.Topics.Events != "", "kafka.topics", "every topic needs a name"},
		{!slices.Contains([]string{c.Kafka.Topics.Examples, c.Kafka.Topics.Labels, c.Kafka.Topics.Predictions, c.Kafka.Topics.Snapshots,
			c.Kafka.Topics.Control, c.Kafka.Topics.Versions, c.Kafka.Topics.LabelRequests}, c.Kafka.Topics.Review), "kafka.topics.review", "must be a topic of its own"},
		{c.Predictions.Explain >= 0 && c.Predictions.Explain <= maxExplain, "predictions.explain", fmt.Sprintf("must be in [0, %d]", maxExplain)},
		{c.Review.TargetPrecision >= 0 && c.Review.TargetPrecision < 1, "review.target_precision", "must be in [0, 1) (0 chooses no thresholds)"},
		{c.Review.Grades > 0, "review.grades", "must be > 0"},
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
		{c.Graph.Vote == "auto" || c.Graph.Vote == "off", "graph.vote", "must be auto or off"},
		{c.Graph.VoteWeight > 0 && c.Graph.VoteWeight <= 1, "graph.vote_weight", "must be in (0, 1]"},
		{c.Graph.VoteNeighbours > 0, "graph.vote_neighbours", "must be > 0"},
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
		{!slices.Contains([]string{c.Kafka.Topics.Snapshots, c.Snapshot.HistoryTopic, c.Kafka.Topics.Control, c.Kafka.Topics.Predictions},
			c.Kafka.Topics.Versions), "kafka.topics.versions", "must be a topic of its own"},
		{c.Active.Budget == "" || c.Active.Budget == "0" || c.Kafka.Topics.LabelRequests != "", "kafka.topics.label_requests", "must name a topic when active.budget makes requests"},
		{!slices.Contains([]string{c.Kafka.Topics.Examples, c.Kafka.Topics.Labels, c.Kafka.Topics.Predictions, c.Kafka.Topics.Snapshots,
			c.Kafka.Topics.Control, c.Kafka.Topics.Versions}, c.Kafka.Topics.LabelRequests), "kafka.topics.label_requests", "must be a topic of its own"},
		{!slices.Contains([]string{c.Kafka.Topics.Snapshots, c.Snapshot.HistoryTopic, c.Kafka.Topics.Control, c.Kafka.Topics.Predictions,
			c.Kafka.Topics.Versions, c.Kafka.Topics.Examples, c.Kafka.Topics.Labels, c.Kafka.Topics.LabelRequests, c.Kafka.Topics.Review}, c.Kafka.Topics.Events), "kafka.topics.events", "must be a topic of its own"},
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
		{c.Input.Format == FormatJSON || c.Input.Format == FormatAvro, "input.format", "must be json or avro"},
		{c.Output.Format == FormatJSON || c.Output.Format == FormatAvro, "output.format", "must be json or avro"},
		{c.SchemaRegistry.URL != "" || !c.UsesSchemaRegistry(), "schema_registry.url", "must be set for Avro (input.format or output.format avro)"},
		{(c.SchemaRegistry.TLS.CertFile == "") == (c.SchemaRegistry.TLS.KeyFile == ""), "schema_registry.tls.cert_file",
			"and schema_registry.tls.key_file go together"},
	}
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("configuration: %s %s", ch.key, ch.msg)
		}
	}
	if err := c.Brokers().Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if err := c.Drift.validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if _, err := c.Window.sample(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if _, err := c.Review.thresholds(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if c.UsesSchemaRegistry() {
		if err := c.Registry().Validate(); err != nil {
			return fmt.Errorf("configuration: schema_registry.%w", err)
		}
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

// ErrNoBrokers says that kafka.brokers names no cluster.
var ErrNoBrokers = errors.New("kafka.brokers is not set")

// CheckBrokers reports whether kafka.brokers names a cluster to run on: an
// error wrapping ErrNoBrokers when it is empty, which says how to name
// one (and, when embedded may be asked for, how to), or when it asks for
// the embedded broker and embedded is false (a command that reads or
// writes a running cluster).
func (c Config) CheckBrokers(embedded bool) error {
	const how = "name the cluster's bootstrap brokers with kafka.brokers in the --config file, " +
		envPrefixBrokers + "=host:9092,host2:9092 or --set kafka.brokers=host:9092"
	bc := c.Brokers()
	switch {
	case len(bc.Brokers) == 0 && embedded:
		return fmt.Errorf("%w: %s; or, to try the service on a private in-process broker that only this process "+
			"knows the address of, --set kafka.brokers=%s", ErrNoBrokers, how, brokers.Embedded)
	case len(bc.Brokers) == 0:
		return fmt.Errorf("%w: %s", ErrNoBrokers, how)
	case bc.IsEmbedded() && !embedded:
		return fmt.Errorf("kafka.brokers is %s, the private broker of a streamer run: this needs a running cluster; %s",
			brokers.Embedded, how)
	}
	return nil
}

// envPrefixBrokers is the environment variable of kafka.brokers.
const envPrefixBrokers = EnvPrefix + "_KAFKA_BROKERS"

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
