package service

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers/brokerstest"
	"streamer/brokers/embedded"
	"streamer/synth"
)

// lockedBuffer is a log sink safe for the service's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServiceOverTLSAndSASL runs the service against a broker that demands
// mutual TLS and SCRAM-SHA-512, and checks that the password appears in
// none of its logs, at debug level.
func TestServiceOverTLSAndSASL(t *testing.T) {
	const password = "correct-horse-battery-staple"
	pki := brokerstest.NewPKI(t)
	sasl := embedded.SASL{Mechanism: "scram-sha-512", Username: "streamer", Password: password}
	cluster, err := embedded.Start(embedded.Config{Partitions: 1, TLS: pki.ServerTLS(), SASL: &sasl})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	t.Setenv("STREAMER_KAFKA_SASL_PASSWORD", password)
	cfg := testConfig(t, cluster.Addrs(), "kafka.partitions=1", "log.level=debug",
		"kafka.tls.enable=true", "kafka.tls.ca_file="+pki.CAFile,
		"kafka.tls.cert_file="+pki.ClientCertFile, "kafka.tls.key_file="+pki.ClientKeyFile,
		"kafka.sasl.mechanism=scram-sha-512", "kafka.sasl.username=streamer")
	if cfg.Kafka.SASL.Password != password {
		t.Fatal("the password did not come from the environment")
	}
	var logs lockedBuffer
	run := startService(t, cfg, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	svc := run.svc
	<-svc.Started()

	conn := testConnection(t, cfg.Brokers(), cluster.Addrs())
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, AllowAutoTopicCreation: true}
	defer w.Close()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 9})
	var msgs []kafka.Message
	for range 50 {
		d := gen.Next()
		msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte(d.ID), Value: []byte(`{"id": "` + d.ID + `", "text": "` + d.Text + `"}`)})
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the examples over TLS and SASL", 30*time.Second, func() bool { return svc.Status().Pipeline.Predictions >= 50 })
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), password) {
		t.Fatal("the SASL password appears in the logs")
	}
	if !strings.Contains(logs.String(), `"sasl_password":"[redacted]"`) {
		t.Fatalf("the connection settings were not logged (redacted):\n%.2000s", logs.String())
	}
}

func newTextLogger(w *lockedBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
