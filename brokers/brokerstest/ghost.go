package brokerstest

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinAndVanish sends a consumer's JoinGroup to the broker at addr, as
// kafka-go does (v2, the range and round-robin protocols), and closes the
// connection without waiting for the answer: a process killed while it
// joins. The group counts the member as joining; when the rebalance
// completes, its answer goes to a closed connection.
func JoinAndVanish(addr, group string, topics []string, session, rebalance time.Duration) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("join and vanish: %w", err)
	}
	defer conn.Close()
	meta := (&kmsg.ConsumerMemberMetadata{Version: 0, Topics: topics, UserData: []byte{}}).AppendTo(nil)
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(2)
	req.Group = group
	req.SessionTimeoutMillis = int32(session / time.Millisecond)
	req.RebalanceTimeoutMillis = int32(rebalance / time.Millisecond)
	req.ProtocolType = "consumer"
	for _, name := range []string{"range", "roundrobin"} {
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = name, meta
		req.Protocols = append(req.Protocols, p)
	}
	msg := kmsg.NewRequestFormatter(kmsg.FormatterClientID("streamer")).AppendRequest(nil, req, 1)
	if _, err := conn.Write(msg); err != nil {
		return fmt.Errorf("join and vanish: %w", err)
	}
	// Close only once the broker has the join (the group rebalances), as
	// a process killed after sending it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		state, _, err := GroupState(ctx, addr, group)
		if err != nil {
			return fmt.Errorf("join and vanish: %w", err)
		}
		if state == "PreparingRebalance" || state == "CompletingRebalance" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("join and vanish: the group did not start rebalancing (state %s)", state)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
