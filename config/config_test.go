package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultsLoadAndValidate(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Kafka.Brokers) != 0 || cfg.Window.MaxExamples != 20000 || cfg.Kafka.BatchTimeout != 5*time.Millisecond {
		t.Fatalf("defaults not read from configs/streamer.yaml: %+v", cfg)
	}
	if cfg.HTTP.Listen != "127.0.0.1:8080" {
		t.Fatalf("http.listen default %q is not localhost", cfg.HTTP.Listen)
	}
}

func TestEnvironmentAndFlagsOverride(t *testing.T) {
	t.Setenv("STREAMER_KAFKA_BROKERS", "a:9092,b:9092")
	t.Setenv("STREAMER_WINDOW_MAX_EXAMPLES", "777")
	t.Setenv("STREAMER_SOLVER_ALGORITHM", "da")
	cfg, err := Load("", []string{"window.max_examples=888", "schedule.solve_interval=3s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Kafka.Brokers) != 2 || cfg.Kafka.Brokers[1] != "b:9092" {
		t.Fatalf("brokers %v", cfg.Kafka.Brokers)
	}
	if cfg.Window.MaxExamples != 888 || cfg.Solver.Algorithm != "da" || cfg.Schedule.SolveInterval != 3*time.Second {
		t.Fatalf("overrides not applied: window %d, algorithm %s, interval %v", cfg.Window.MaxExamples, cfg.Solver.Algorithm, cfg.Schedule.SolveInterval)
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("window:\n  max_examples: 1234\nkafka:\n  brokers: [x:1]\n"), 0o644)
	cfg, err := Load(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Window.MaxExamples != 1234 || cfg.Window.K != 10 {
		t.Fatalf("file not merged over the defaults: %+v", cfg.Window)
	}
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("window:\n  max_exampels: 5\n"), 0o644)
	if _, err := Load(typo, nil); err == nil || !strings.Contains(err.Error(), "window.max_exampels") {
		t.Fatalf("unknown key: err = %v", err)
	}
}

func TestBadValuesNameTheKey(t *testing.T) {
	tests := []struct {
		set string
		key string
	}{
		{"window.max_examples=0", "window.max_examples"},
		{"kafka.start=middle", "kafka.start"},
		{"graph.weights=gaussian", "graph.weights"},
		{"graph.degree=-1", "graph.degree"},
		{"solver.algorithm=svn", "solver.algorithm"},
		{"solver.lambda=-1", "lambda"},
		{"kafka.sasl.mechanism=kerberos", "kafka.sasl.mechanism"},
		{"log.level=loud", "log.level"},
		{"window.max_examples=lots", "max_examples"},
		{"nonsense.key=1", "nonsense.key"},
		{"role=boss", "role"},
		{"kafka.topics.lease=", "kafka.topics"},
		{"snapshot.history_retention=0s", "snapshot.history_retention"},
		{"snapshot.history_topic=model-snapshots", "snapshot.history_topic"},
		{"kafka.topics.control=model-snapshots-history", "kafka.topics.control"},
		{"kafka.topics.versions=model-snapshots", "kafka.topics.versions"},
		{"kafka.topics.versions=predictions", "kafka.topics.versions"},
		{"kafka.topics.versions=", "kafka.topics"},
		{"kafka.topics.events=model-snapshots", "kafka.topics.events"},
		{"drift.detectors=labels,ages", "drift.detectors"},
		{"drift.react=retrain", "drift.react"},
		{"drift.labels.rise=1.5", "drift.labels.rise"},
		{"drift.labels.reference=5", "drift.labels.reference"},
		{"drift.neighbours.sample=0", "drift.neighbours.sample"},
		{"drift.scores.delta=2", "drift.scores.delta"},
		{"drift.spacing=0", "drift.spacing"},
		{"drift.false_alarm_examples=-1", "drift.false_alarm_examples"},
		{"drift.forget=everything", "drift.forget"},
		{"drift.quicken_factor=0", "drift.quicken_factor"},
		{"drift.ask_factor=0.5", "drift.ask_factor"},
	}
	for _, tt := range tests {
		_, err := Load("", []string{tt.set})
		if err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("--set %s: err = %v, want it to name %s", tt.set, err, tt.key)
		}
	}
}

// TestDriftLists: the list keys take a comma-separated --set, and none
// turns the watch or the reactions off.
func TestDriftLists(t *testing.T) {
	c, err := Load("", []string{"drift.detectors=labels,scores", "drift.react=none"})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := c.Pipeline()
	if err != nil {
		t.Fatal(err)
	}
	d := pc.Drift
	if d.Off || !d.Detectors.Off["neighbours"] || d.Detectors.Off["labels"] || d.Detectors.Off["scores"] || d.Forget || d.Quicken {
		t.Errorf("drift %+v", d)
	}
	c, err = Load("", []string{"drift.detectors=none"})
	if err != nil {
		t.Fatal(err)
	}
	if pc, _ := c.Pipeline(); !pc.Drift.Off {
		t.Error("drift.detectors=none: the watch runs")
	}
}

// TestDriftFalseAlarmExamples: the watch bounds false alarms per
// example by default, and 0 keeps the thresholds as set.
func TestDriftFalseAlarmExamples(t *testing.T) {
	for set, want := range map[string]float64{"": 100_000, "drift.false_alarm_examples=0": 0, "drift.false_alarm_examples=86400000": 86_400_000} {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		c, err := Load("", sets)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := c.Pipeline()
		if err != nil {
			t.Fatal(err)
		}
		if got := pc.Drift.Detectors.FalseAlarmExamples; got != want {
			t.Errorf("%q: false alarm examples %v, want %v", set, got, want)
		}
	}
}

// TestLowerLayerErrorsNameTheKey sets values that only the packages the
// configuration is given to refuse (anngraph's bounds, online's
// combinations, ingest's classes): Load refuses them and names the
// key, not the Go field.
func TestLowerLayerErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		set []string
		key string
	}{
		{[]string{"window.k=5000"}, "window.k must be at most 4096"},
		{[]string{"window.m=5000"}, "window.m must be at most 1024"},
		{[]string{"window.max_examples=3000000000"}, "window.max_examples must be at most"},
		{[]string{"graph.sigma=+Inf"}, "graph.sigma must be finite"},
		{[]string{"solver.algorithm=laprls", "solver.lambda_i=0"}, "solver.lambda_i must be > 0 for laprls"},
		{[]string{"solver.sr_delta=2"}, "solver.sr_delta must be in (0, 1]"},
		{[]string{"solver.sr_k=-1"}, "solver.sr_k must be >= 0"},
		{[]string{"solver.cost_neg=-1"}, "solver.cost_neg must be >= 0"},
		{[]string{"solver.r=1"}, "solver.r must be in [0, 1)"},
		{[]string{"features.gamma=+Inf"}, "features.gamma must be finite"},
		{[]string{"limits.classes=spam,spam"}, "limits.classes:"},
	}
	for _, tt := range tests {
		_, err := Load("", tt.set)
		// The flag that set the key comes first.
		want := "--set " + tt.set[len(tt.set)-1] + ": " + tt.key
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %v: err = %v, want it to say %q", tt.set, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "anngraph") {
			t.Errorf("--set %v: %v speaks of a package, not of the key", tt.set, err)
		}
	}
}

func TestUnknownEnvironmentVariableNamesIt(t *testing.T) {
	t.Setenv("STREAMER_SOLVER_LAMDA", "1")
	_, err := Load("", nil)
	if err == nil || !strings.Contains(err.Error(), "STREAMER_SOLVER_LAMDA") {
		t.Fatalf("err = %v, want it to name STREAMER_SOLVER_LAMDA", err)
	}
	os.Unsetenv("STREAMER_SOLVER_LAMDA")
	t.Setenv("STREAMER_SOLVER_LAMBDA_U", "0.5") // a key with _ in its name
	if cfg, err := Load("", nil); err != nil || cfg.Solver.LambdaU != 0.5 {
		t.Fatalf("STREAMER_SOLVER_LAMBDA_U: λ_u %v, err %v", cfg.Solver.LambdaU, err)
	}
}

func TestYAMLSyntaxErrorNamesItsLine(t *testing.T) {
	tests := []struct {
		yaml string
		line string
	}{
		{"window:\n  max_examples: [1\nkafka:\n  group: g\n", "line 2:"},
		{"window:\n  k: 3\n max_examples: 4\n", "line 3:"},
		{"window:\n max_examples: 5\n  k: 3\n", "line 3:"},
		{"model:\n  name: \"x\n", "line 2:"},
		{"window:\n\tk: 3\n", "line 2:"},
		{"window:\n  k: [1,\n    2]\nmodel: : x\n", "line 4:"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		path := filepath.Join(dir, fmt.Sprintf("bad%d.yaml", i))
		os.WriteFile(path, []byte(tt.yaml), 0o644)
		_, err := Load(path, nil)
		if err == nil || !strings.Contains(err.Error(), tt.line) || strings.Count(err.Error(), "line ") != 1 {
			t.Errorf("%q: err = %v, want %s", tt.yaml, err, tt.line)
		}
	}
}

// TestRole: role defaults to all and is set like any key, by the
// environment and by --set, which wins.
func TestRole(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil || cfg.Role != RoleAll || cfg.Kafka.Topics.Lease == "" {
		t.Fatalf("default role %q, lease topic %q, err %v", cfg.Role, cfg.Kafka.Topics.Lease, err)
	}
	t.Setenv("STREAMER_ROLE", "scorer")
	if cfg, err = Load("", nil); err != nil || cfg.Role != RoleScorer {
		t.Fatalf("STREAMER_ROLE=scorer: role %q, err %v", cfg.Role, err)
	}
	if cfg, err = Load("", []string{"role=learner"}); err != nil || cfg.Role != RoleLearner {
		t.Fatalf("--set role=learner: role %q, err %v", cfg.Role, err)
	}
}

// TestRoleExamplesLoad: the example configurations of configs/ load and
// name their role.
func TestRoleExamplesLoad(t *testing.T) {
	for file, role := range map[string]string{"scorer.yaml": RoleScorer, "learner.yaml": RoleLearner} {
		cfg, err := Load(filepath.Join("..", "configs", file), nil)
		if err != nil {
			t.Errorf("configs/%s: %v", file, err)
			continue
		}
		if cfg.Role != role {
			t.Errorf("configs/%s: role %q, want %q", file, cfg.Role, role)
		}
	}
}

// TestErrorsNameWhereTheKeyWasSet: an unknown key or a bad value is an
// error that names the flag, the environment variable or the file that
// set it, and the key; a near miss of a key is suggested.
func TestErrorsNameWhereTheKeyWasSet(t *testing.T) {
	dir := t.TempDir()
	file := func(name, yaml string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		env  map[string]string
		file string
		set  []string
		want string
	}{
		{name: "--set unknown key", set: []string{"solver.algorthm=tsvm"},
			want: "--set solver.algorthm=tsvm: no key solver.algorthm in configs/streamer.yaml (did you mean solver.algorithm?)"},
		{name: "--set far from every key", set: []string{"nonsense.key=1"},
			want: "--set nonsense.key=1: no key nonsense.key in configs/streamer.yaml"},
		{name: "--set without =", set: []string{"solver.algorithm"},
			want: "--set solver.algorithm: want key=value, with a key of configs/streamer.yaml"},
		{name: "--set bad duration", set: []string{"window.max_age=1"},
			want: `--set window.max_age=1: window.max_age: time: missing unit in duration "1"`},
		{name: "--set bad number", set: []string{"window.k=ten"},
			want: "--set window.k=ten: window.k: cannot parse value as 'int'"},
		{name: "--set bad value", set: []string{"window.max_examples=0"},
			want: "--set window.max_examples=0: window.max_examples must be > 1"},
		{name: "environment bad duration", env: map[string]string{"STREAMER_WINDOW_MAX_AGE": "1"},
			want: `STREAMER_WINDOW_MAX_AGE=1: window.max_age: time: missing unit in duration "1"`},
		{name: "environment bad value", env: map[string]string{"STREAMER_KAFKA_START": "middle"},
			want: "STREAMER_KAFKA_START=middle: kafka.start must be earliest or latest"},
		{name: "environment unknown variable", env: map[string]string{"STREAMER_SOLVER_LAMDA": "1"},
			want: "environment variable STREAMER_SOLVER_LAMDA is the variable of no key of configs/streamer.yaml (did you mean STREAMER_SOLVER_LAMBDA?)"},
		{name: "file bad duration", file: file("age.yaml", "window:\n  max_age: \"1x\"\n"),
			want: `configuration ` + filepath.Join(dir, "age.yaml") + `: window.max_age: time: unknown unit "x" in duration "1x"`},
		{name: "file number for a duration", file: file("age1.yaml", "window:\n  max_age: 1\n"),
			want: `configuration ` + filepath.Join(dir, "age1.yaml") + `: window.max_age: 1 is not a duration: give its unit, such as 1s or 1m`},
		{name: "file zero for a duration", file: file("age0.yaml", "window:\n  max_age: 0\nkafka:\n  group: \"1\"\n"), want: ""},
		{name: "file bad value", file: file("k.yaml", "window:\n  k: 0\n"),
			want: `configuration ` + filepath.Join(dir, "k.yaml") + `: window.k must be > 0`},
		{name: "file unknown key", file: file("typo.yaml", "window:\n  max_exampels: 5\n"),
			want: `configuration ` + filepath.Join(dir, "typo.yaml") + `: unknown key window.max_exampels (did you mean window.max_examples?)`},
		{name: "--set beats the environment", env: map[string]string{"STREAMER_WINDOW_MAX_AGE": "1h"}, set: []string{"window.max_age=2"},
			want: `--set window.max_age=2: window.max_age: time: missing unit in duration "2"`},
		{name: "the environment beats the file", env: map[string]string{"STREAMER_WINDOW_K": "-1"}, file: file("k2.yaml", "window:\n  k: 3\n"),
			want: "STREAMER_WINDOW_K=-1: window.k must be > 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := Load(tt.file, tt.set)
			if tt.want == "" && err != nil {
				t.Errorf("err = %v, want none", err)
			}
			if tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
				t.Errorf("err = %v\nwant   %s", err, tt.want)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	keys := []string{"solver.algorithm", "solver.lambda", "solver.lambda_u", "window.k"}
	tests := []struct{ name, want string }{
		{"solver.algorthm", " (did you mean solver.algorithm?)"},
		{"solver.lamda", " (did you mean solver.lambda?)"},
		{"solver.lambda_v", " (did you mean solver.lambda_u?)"},
		{"window.kk", " (did you mean window.k?)"},
		{"graph.sigma", ""},
	}
	for _, tt := range tests {
		if got := didYouMean(tt.name, keys); got != tt.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCheckBrokers: no broker is a default; the error says how to name
// the cluster (the key and its variable), and how to ask for the
// embedded broker where that may be asked for.
func TestCheckBrokers(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.CheckBrokers(true)
	for _, want := range []string{"kafka.brokers", "STREAMER_KAFKA_BROKERS", "--set kafka.brokers=embedded"} {
		if !errors.Is(err, ErrNoBrokers) || !strings.Contains(err.Error(), want) {
			t.Errorf("no brokers: err = %v, want ErrNoBrokers naming %s", err, want)
		}
	}
	if err := cfg.CheckBrokers(false); err == nil || strings.Contains(err.Error(), "embedded") {
		t.Errorf("no brokers, embedded not allowed: err = %v, want one that does not offer it", err)
	}
	embedded, _ := Load("", []string{"kafka.brokers=embedded"})
	if err := embedded.CheckBrokers(true); err != nil {
		t.Errorf("embedded asked for: %v", err)
	}
	if err := embedded.CheckBrokers(false); err == nil || !strings.Contains(err.Error(), "running cluster") {
		t.Errorf("embedded where a running cluster is needed: err = %v", err)
	}
	cluster, _ := Load("", []string{"kafka.brokers=k1:9092,k2:9092"})
	if err := cluster.CheckBrokers(false); err != nil || len(cluster.Kafka.Brokers) != 2 {
		t.Errorf("a cluster: brokers %v, err = %v", cluster.Kafka.Brokers, err)
	}
}

// TestReviewKeys: the review and predictions keys reach the pipeline,
// and a bad value is refused naming its key.
func TestReviewKeys(t *testing.T) {
	c, err := Load("", []string{"review.thresholds=Spam=0.9,ham=0.75", "review.target_precision=0.95", "predictions.explain=5"})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := c.Pipeline()
	if err != nil {
		t.Fatal(err)
	}
	if pc.Review.Thresholds["Spam"] != 0.9 || pc.Review.Thresholds["ham"] != 0.75 || pc.Learner.Review.TargetPrecision != 0.95 || pc.Explain != 5 {
		t.Fatalf("pipeline got thresholds %v, target %v, explain %d", pc.Review.Thresholds, pc.Learner.Review.TargetPrecision, pc.Explain)
	}
	for _, tt := range []struct{ set, want string }{
		{"review.thresholds=spam", "review.thresholds: \"spam\" is not class=threshold"},
		{"review.thresholds=spam=2", "review.thresholds: \"spam=2\": the threshold must be in [0, 1]"},
		{"review.target_precision=1", "review.target_precision must be in [0, 1)"},
		{"review.grades=0", "review.grades must be > 0"},
		{"predictions.explain=-1", "predictions.explain must be in [0, 100]"},
		{"kafka.topics.review=labels", "kafka.topics.review must be a topic of its own"},
	} {
		if _, err := Load("", []string{tt.set}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("--set %s: err = %v, want it to say %q", tt.set, err, tt.want)
		}
	}
	// Scorers route by the thresholds published in the learner's snapshots.
	for _, role := range []string{RoleScorer, RoleLearner} {
		if _, err := Load("", []string{"role=" + role, "review.target_precision=0.95"}); err != nil {
			t.Errorf("role %s with a target precision: %v", role, err)
		}
	}
}
