package brokers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
)

// ErrUnreachable is returned when none of the brokers could be connected
// to; it wraps the reason of each (a refused connection, an unknown host).
var ErrUnreachable = errors.New("no broker reachable")

// FetchMaxWait is how long a fetch waits at the broker for data on a
// caught-up partition. kafka-go's reader gives the socket a deadline of
// exactly MaxWait and asks the broker to wait MaxWait/4 less below one
// second (1s less above): at 100ms the broker answers 25ms before the
// deadline, which a loaded machine misses, and the reader then logs an
// "unknown error … i/o timeout", drops the connection and dials again, on
// every first start and after every catch-up. At 2s the broker waits 1s and
// the answer has a second to arrive. Data that arrives ends the wait.
const FetchMaxWait = 2 * time.Second

// Explain returns err, unless it is kafka-go's answer to brokers it could
// not connect to: [8] Broker Not Available, which says nothing of why. Then
// it dials each broker and returns ErrUnreachable with what the dials say.
func (c *Connection) Explain(ctx context.Context, err error) error {
	if !errors.Is(err, kafka.BrokerNotAvailable) {
		return err
	}
	var reasons []error
	for _, addr := range c.Addrs {
		conn, derr := (&net.Dialer{Timeout: c.Dialer.Timeout}).DialContext(ctx, "tcp", addr)
		if derr == nil {
			conn.Close()
			return err // reachable: the broker's own answer stands
		}
		reasons = append(reasons, describeDial(addr, derr))
	}
	if len(reasons) == 0 {
		return err
	}
	return &unreachableError{reasons}
}

// unreachableError is ErrUnreachable with the reason of every broker, on
// one line.
type unreachableError struct{ reasons []error }

func (e *unreachableError) Error() string {
	msg := ErrUnreachable.Error()
	for i, r := range e.reasons {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		msg += sep + r.Error()
	}
	return msg
}

func (e *unreachableError) Unwrap() []error { return append([]error{ErrUnreachable}, e.reasons...) }

// describeDial says in a few words why addr could not be dialed.
func describeDial(addr string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return fmt.Errorf("broker %s: host %s cannot be resolved: %w", addr, dns.Name, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("broker %s: connection refused (nothing listens there): %w", addr, err)
	}
	return fmt.Errorf("broker %s: %w", addr, err)
}

// Ping asks the brokers for their API versions: a round trip that the
// transport's metadata cache cannot answer. Metadata is served from that
// cache, which a broker that is away leaves as it was (a topic created
// since is not in it), so a check that finds no partition there has not
// heard from the brokers; Ping does.
func (c *Connection) Ping(ctx context.Context) error {
	if _, err := c.Client().ApiVersions(ctx, &kafka.ApiVersionsRequest{}); err != nil {
		return fmt.Errorf("ping the brokers: %w", c.Explain(ctx, err))
	}
	return nil
}
