package brokers

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"streamer/internal/tlsconfig"
)

// Embedded is the broker list that asks for the in-process cluster.
const Embedded = "embedded"

// Config says how to reach a Kafka cluster. The zero value of each field
// means the default beside it.
type Config struct {
	// Brokers are the bootstrap addresses, or ["embedded"] for the
	// in-process cluster.
	Brokers []string
	TLS     TLSConfig
	SASL    SASLConfig
	// DialTimeout bounds each connection attempt; 0 means 10s.
	DialTimeout time.Duration
	ClientID    string // 0 means "streamer"
}

// TLSConfig enables TLS to the brokers.
type TLSConfig struct {
	Enable             bool
	CAFile             string // PEM CA bundle; empty: the system roots
	CertFile           string // PEM client certificate, for mutual TLS
	KeyFile            string // PEM key of CertFile
	ServerName         string // overrides the name checked in the server certificate
	InsecureSkipVerify bool
}

// SASLConfig enables SASL authentication.
type SASLConfig struct {
	// Mechanism is "" (none), "plain", "scram-sha-256" or "scram-sha-512".
	Mechanism string
	Username  string
	Password  string
}

// Validate names the first bad field. An empty Brokers is not one: it
// names no cluster, which only the commands that connect refuse.
func (c Config) Validate() error {
	if len(c.Brokers) > 1 && slices.Contains(c.Brokers, Embedded) {
		return fmt.Errorf("kafka.brokers: %q cannot be mixed with addresses", Embedded)
	}
	switch strings.ToLower(c.SASL.Mechanism) {
	case "", "plain", "scram-sha-256", "scram-sha-512":
	default:
		return fmt.Errorf("kafka.sasl.mechanism: %q is not plain, scram-sha-256 or scram-sha-512", c.SASL.Mechanism)
	}
	if c.SASL.Mechanism != "" && c.SASL.Username == "" {
		return fmt.Errorf("kafka.sasl.username: empty with mechanism %s", c.SASL.Mechanism)
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return fmt.Errorf("kafka.tls.cert_file and kafka.tls.key_file go together")
	}
	return nil
}

// IsEmbedded reports whether the configuration asks for the in-process
// cluster.
func (c Config) IsEmbedded() bool {
	return len(c.Brokers) == 1 && c.Brokers[0] == Embedded
}

// LogValue keeps secrets out of logs: the password is never printed.
func (c Config) LogValue() slog.Value {
	pw := ""
	if c.SASL.Password != "" {
		pw = "[redacted]"
	}
	return slog.GroupValue(
		slog.Any("brokers", c.Brokers),
		slog.Bool("tls", c.TLS.Enable),
		slog.String("sasl", c.SASL.Mechanism),
		slog.String("sasl_username", c.SASL.Username),
		slog.String("sasl_password", pw),
	)
}

// String prints the configuration without secrets.
func (c Config) String() string { return c.LogValue().String() }

func (c Config) dialTimeout() time.Duration {
	if c.DialTimeout > 0 {
		return c.DialTimeout
	}
	return 10 * time.Second
}

func (c Config) clientID() string {
	if c.ClientID != "" {
		return c.ClientID
	}
	return "streamer"
}

// tlsConfig builds the TLS configuration, nil when TLS is off.
func (c Config) tlsConfig() (*tls.Config, error) {
	if !c.TLS.Enable {
		return nil, nil
	}
	cfg, err := tlsconfig.Files{
		CAFile: c.TLS.CAFile, CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile,
		ServerName: c.TLS.ServerName, InsecureSkipVerify: c.TLS.InsecureSkipVerify,
	}.Load()
	if err != nil {
		return nil, fmt.Errorf("kafka.tls.%w", err)
	}
	return cfg, nil
}

// mechanism builds the SASL mechanism, nil when SASL is off.
func (c Config) mechanism() (sasl.Mechanism, error) {
	switch strings.ToLower(c.SASL.Mechanism) {
	case "":
		return nil, nil
	case "plain":
		return plain.Mechanism{Username: c.SASL.Username, Password: c.SASL.Password}, nil
	case "scram-sha-256":
		return scram.Mechanism(scram.SHA256, c.SASL.Username, c.SASL.Password)
	case "scram-sha-512":
		return scram.Mechanism(scram.SHA512, c.SASL.Username, c.SASL.Password)
	}
	return nil, fmt.Errorf("kafka.sasl.mechanism: unknown %q", c.SASL.Mechanism)
}

// Connection is what readers, writers and clients share to reach the
// cluster: resolved addresses, the dialer (for readers) and the transport
// (for writers and admin requests).
type Connection struct {
	Addrs     []string
	Dialer    *kafka.Dialer
	Transport *kafka.Transport
}

// Connect builds the connection of c to the brokers at addrs (c.Brokers,
// or the embedded cluster's addresses).
func (c Config) Connect(addrs []string) (*Connection, error) {
	tlsCfg, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	mech, err := c.mechanism()
	if err != nil {
		return nil, err
	}
	return &Connection{
		Addrs: addrs,
		Dialer: &kafka.Dialer{
			ClientID: c.clientID(), Timeout: c.dialTimeout(), DualStack: true,
			TLS: tlsCfg, SASLMechanism: mech,
		},
		Transport: &kafka.Transport{
			ClientID: c.clientID(), DialTimeout: c.dialTimeout(),
			TLS: tlsCfg, SASL: mech, IdleTimeout: 30 * time.Second,
		},
	}, nil
}

// Close stops the transport: its connections, and the metadata refresh
// that each cluster it reached runs in the background. Without it the
// refresh goes on for the life of the process, dialing the brokers' address
// even after they are gone; kafka-go then reads whatever answers on a port
// reused since as a Kafka response, and a garbled array length there makes
// it allocate and fill an array of up to 2^31 entries, enough to exhaust a
// process's memory. Readers and writers built on the connection are closed
// first; the connection is not used after.
func (c *Connection) Close() {
	c.Transport.CloseIdleConnections()
}

// Client returns an admin and metadata client over the connection.
func (c *Connection) Client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(c.Addrs...), Transport: c.Transport, Timeout: 30 * time.Second}
}
