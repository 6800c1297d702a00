package brokers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers/brokerstest"
	"streamer/brokers/embedded"
)

// roundTrip creates a topic, writes and reads a record over conn.
func roundTrip(ctx context.Context, conn *Connection) error {
	if err := conn.EnsureTopics(ctx, Topic{Name: "secure"}); err != nil {
		return err
	}
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "secure", RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("hello")}); err != nil {
		return err
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: conn.Addrs, Dialer: conn.Dialer, Topic: "secure", GroupID: "g", StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	m, err := r.FetchMessage(ctx)
	if err != nil {
		return err
	}
	return r.CommitMessages(ctx, m)
}

func TestTLSAndSASL(t *testing.T) {
	pki := brokerstest.NewPKI(t)
	for _, mech := range []string{"plain", "scram-sha-256", "scram-sha-512"} {
		t.Run(mech, func(t *testing.T) {
			sasl := SASLConfig{Mechanism: mech, Username: "svc", Password: "s3cret-" + mech}
			cluster := startTestCluster(t, embedded.Config{TLS: pki.ServerTLS(), SASL: &embedded.SASL{Mechanism: mech, Username: sasl.Username, Password: sasl.Password}})
			good := Config{
				Brokers: cluster.Addrs(),
				TLS:     TLSConfig{Enable: true, CAFile: pki.CAFile, CertFile: pki.ClientCertFile, KeyFile: pki.ClientKeyFile},
				SASL:    sasl,
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			conn, err := good.Connect(cluster.Addrs())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := roundTrip(ctx, conn); err != nil {
				t.Fatalf("with TLS and %s: %v", mech, err)
			}
			bad := good
			bad.SASL.Password = "wrong"
			bad.DialTimeout = 2 * time.Second
			conn, err = bad.Connect(cluster.Addrs())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			short, cancel2 := context.WithTimeout(ctx, 3*time.Second)
			defer cancel2()
			if err := conn.EnsureTopics(short, Topic{Name: "nope"}); err == nil {
				t.Fatal("a wrong password was accepted")
			}
		})
	}
}

func TestTLSConfigErrors(t *testing.T) {
	c := Config{Brokers: []string{"x:1"}, TLS: TLSConfig{Enable: true, CAFile: "/no/such/ca.pem"}}
	if _, err := c.Connect(c.Brokers); err == nil {
		t.Fatal("a missing CA file was accepted")
	}
}

func TestSecretsAreNotPrinted(t *testing.T) {
	c := Config{Brokers: []string{"x:1"}, SASL: SASLConfig{Mechanism: "plain", Username: "u", Password: "hunter2"}}
	for _, s := range []string{c.String(), c.LogValue().String()} {
		if strings.Contains(s, "hunter2") {
			t.Fatalf("secret printed: %s", s)
		}
	}
}
