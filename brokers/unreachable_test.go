package brokers

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestUnreachableBrokersAreNamed: a refused connection and a host that
// does not resolve are reported as such, not as kafka-go's [8] Broker Not
// Available.
func TestUnreachableBrokersAreNamed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close() // nothing listens there now
	tests := []struct {
		addr string
		want string
	}{
		{refused, "connection refused"},
		{"no-such-broker.invalid:9092", "cannot be resolved"},
	}
	for _, tt := range tests {
		conn, err := Config{Brokers: []string{tt.addr}}.Connect([]string{tt.addr})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err = conn.EnsureTopics(ctx, Topic{Name: "t"})
		cancel()
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "Broker Not Available") {
			t.Errorf("%s: err = %v, want %s", tt.addr, err, tt.want)
		}
	}
}
