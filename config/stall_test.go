package config

import (
	"strings"
	"testing"
	"time"
)

// TestStallTimeoutMustOutlastARejoin: a restarted process may wait a
// session or rebalance timeout for its partitions, and that wait is not a
// stall.
func TestStallTimeoutMustOutlastARejoin(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Kafka.StallTimeout != time.Minute {
		t.Fatalf("kafka.stall_timeout default %v", cfg.Kafka.StallTimeout)
	}
	for _, set := range [][]string{
		{"kafka.stall_timeout=0s"},
		{"kafka.stall_timeout=10s"}, // the default session timeout
		{"kafka.stall_timeout=20s", "kafka.rebalance_timeout=30s"},
	} {
		if _, err := Load("", set); err == nil || !strings.Contains(err.Error(), "kafka.stall_timeout") {
			t.Errorf("--set %v: err = %v, want it to name kafka.stall_timeout", set, err)
		}
	}
	if _, err := Load("", []string{"kafka.stall_timeout=11s"}); err != nil {
		t.Errorf("kafka.stall_timeout=11s: %v", err)
	}
}
