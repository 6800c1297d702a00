package brokers

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// ClusterConfig describes an in-process Kafka-protocol cluster.
type ClusterConfig struct {
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
	SASL *SASLConfig
	// TLS, when set, makes the broker listen with TLS only.
	TLS *tls.Config
	// Log receives what the cluster does on its own (sessions.go); nil
	// discards it.
	Log *slog.Logger
	// ForgetSessions turns the session keeper off, leaving kfake's own
	// behaviour, for tests that reproduce what the keeper prevents.
	ForgetSessions bool
}

// Cluster is a running in-process cluster (franz-go's kfake), with a
// keeper of group sessions that kfake can forget (sessions.go).
type Cluster struct {
	*kfake.Cluster
	self *Connection // the connection of the cluster's own client, closed with it
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// StartCluster starts an in-process cluster. Close stops it.
func StartCluster(cfg ClusterConfig) (*Cluster, error) {
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
	self, err := cfg.selfConnection(c.ListenAddrs())
	if err != nil {
		c.Close()
		return nil, err
	}
	client := self.Client()
	client.Timeout = 5 * time.Second
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
	c.self.Close()
	c.Cluster.Close()
}

// selfConnection is the cluster's connection to itself, for its own
// requests, with its TLS (not verified: it talks to itself) and SASL
// superuser.
func (cfg ClusterConfig) selfConnection(addrs []string) (*Connection, error) {
	bc := Config{Brokers: addrs, DialTimeout: 5 * time.Second}
	if cfg.TLS != nil {
		bc.TLS = TLSConfig{Enable: true, InsecureSkipVerify: true}
	}
	if cfg.SASL != nil {
		bc.SASL = *cfg.SASL
	}
	conn, err := bc.Connect(addrs)
	if err != nil {
		return nil, fmt.Errorf("start embedded cluster: %w", err)
	}
	return conn, nil
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
	switch m {
	case "scram-sha-256":
		return "SCRAM-SHA-256"
	case "scram-sha-512":
		return "SCRAM-SHA-512"
	}
	return "PLAIN"
}

// Addrs returns the brokers' addresses.
func (c *Cluster) Addrs() []string { return c.ListenAddrs() }
