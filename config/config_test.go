package config

import (
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
	if cfg.Kafka.Brokers[0] != "embedded" || cfg.Window.MaxExamples != 20000 || cfg.Kafka.BatchTimeout != 5*time.Millisecond {
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
	}
	for _, tt := range tests {
		_, err := Load("", []string{tt.set})
		if err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("--set %s: err = %v, want it to name %s", tt.set, err, tt.key)
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
		if err == nil || !strings.Contains(err.Error(), "configuration: "+tt.key) {
			t.Errorf("--set %v: err = %v, want it to say %q", tt.set, err, tt.key)
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
