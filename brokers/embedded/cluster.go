package embedded

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Config describes an in-process Kafka-protocol cluster. The zero value
// is one broker on a free port of 127.0.0.1, topics of one partition
// created on first use, in memory.
type Config struct {
	// Listen is the address of the (single) broker; "" means a free port
	// on 127.0.0.1. kfake listens on 127.0.0.1 whatever the host.
	Listen string
	// Partitions is the number of partitions of topics created
	// automatically; 0 means 1.
	Partitions int
	// DataDir, when set, keeps the cluster's data on disk there, so that a
	// cluster started again on the same directory has it back.
	DataDir string
	// MaxMessageBytes is the broker's message size limit; 0 means kfake's
	// default (about 1 MiB).
	MaxMessageBytes int
	// SASL adds a superuser and requires SASL authentication.
	SASL *SASL
	// TLS, when set, makes the broker listen with TLS only.
	TLS *tls.Config
	// Log receives what the cluster does on its own (sessions.go); nil
	// discards it.
	Log *slog.Logger
	// ForgetSessions turns the session keeper off, leaving kfake's own
	// behaviour, for tests that reproduce what the keeper prevents.
	ForgetSessions bool
}

// SASL is the superuser of a cluster that requires SASL authentication.
type SASL struct {
	// Mechanism is "plain", "scram-sha-256" or "scram-sha-512".
	Mechanism string
	Username  string
	Password  string
}

// Cluster is a running in-process cluster (franz-go's kfake), with a
// keeper of group sessions that kfake can forget (sessions.go).
type Cluster struct {
	*kfake.Cluster
	self *kafka.Transport // of the cluster's own client, closed with it
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// Start starts an in-process cluster. Close stops it.
func Start(cfg Config) (*Cluster, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}
	if cfg.Partitions > 0 {
		opts = append(opts, kfake.DefaultNumPartitions(cfg.Partitions))
	}
	if cfg.Listen != "" {
		port, err := listenPort(cfg.Listen)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kfake.Ports(port))
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	if cfg.MaxMessageBytes > 0 {
		opts = append(opts, kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(cfg.MaxMessageBytes)}))
	}
	if cfg.TLS != nil {
		opts = append(opts, kfake.TLS(cfg.TLS))
	}
	if cfg.SASL != nil {
		opts = append(opts, kfake.EnableSASL(), kfake.Superuser(saslMethod(cfg.SASL.Mechanism), cfg.SASL.Username, cfg.SASL.Password))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start embedded cluster: %w", err)
	}
	self, err := cfg.selfTransport()
	if err != nil {
		c.Close()
		return nil, err
	}
	client := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Transport: self, Timeout: 5 * time.Second}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	cl := &Cluster{Cluster: c, self: self, stop: stop}
	if !cfg.ForgetSessions {
		keeper := newSessionKeeper(c, client, log)
		cl.wg.Go(func() { keeper.run(ctx, 500*time.Millisecond) })
	}
	return cl, nil
}

// Close stops the cluster and what runs beside it.
func (c *Cluster) Close() {
	c.stop()
	c.wg.Wait()
	// Left open, the transport would refresh its metadata from the
	// cluster's address for the life of the process.
	c.self.CloseIdleConnections()
	c.Cluster.Close()
}

// Addrs returns the brokers' addresses.
func (c *Cluster) Addrs() []string { return c.ListenAddrs() }

// selfTransport is the transport of the cluster's requests to itself,
// with its TLS (not verified: it talks to itself) and SASL superuser.
func (cfg Config) selfTransport() (*kafka.Transport, error) {
	tr := &kafka.Transport{ClientID: "streamer", DialTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second}
	if cfg.TLS != nil {
		tr.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the cluster talks to itself
	}
	if cfg.SASL != nil {
		mech, err := cfg.SASL.mechanism()
		if err != nil {
			return nil, fmt.Errorf("start embedded cluster: %w", err)
		}
		tr.SASL = mech
	}
	return tr, nil
}

func (s SASL) mechanism() (sasl.Mechanism, error) {
	switch strings.ToLower(s.Mechanism) {
	case "plain":
		return plain.Mechanism{Username: s.Username, Password: s.Password}, nil
	case "scram-sha-256":
		return scram.Mechanism(scram.SHA256, s.Username, s.Password)
	case "scram-sha-512":
		return scram.Mechanism(scram.SHA512, s.Username, s.Password)
	}
	return nil, fmt.Errorf("sasl mechanism %q is not plain, scram-sha-256 or scram-sha-512", s.Mechanism)
}

func listenPort(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("listen address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return 0, fmt.Errorf("listen address %q: bad port", addr)
	}
	return port, nil
}

// saslMethod names a mechanism as kfake does.
func saslMethod(m string) string {
	switch strings.ToLower(m) {
	case "scram-sha-256":
		return "SCRAM-SHA-256"
	case "scram-sha-512":
		return "SCRAM-SHA-512"
	}
	return "PLAIN"
}
