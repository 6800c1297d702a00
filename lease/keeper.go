package lease

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/segmentio/kafka-go"
)

// keeper is the lease group's balancer: it gives every partition of the
// lease topic to the member that holds it, the one that took it at the
// latest generation when two say so (one was expelled and has not noticed
// yet), and to the first member by ID when none holds it.
type keeper struct {
	since atomic.Int32 // generation at which this member took the lease; 0: it does not hold it
}

// protocolName names the balancer in the group's protocol: every member
// must use it.
const protocolName = "streamer-lease"

func (k *keeper) claim(generation int32) { k.since.Store(generation) }

// ProtocolName implements kafka.GroupBalancer.
func (k *keeper) ProtocolName() string { return protocolName }

// UserData is this member's claim: the generation at which it took the
// lease, 0 when it does not hold it.
func (k *keeper) UserData() ([]byte, error) {
	return k.claimBytes(uint32(k.since.Load())), nil
}

func (k *keeper) claimBytes(generation uint32) []byte {
	return binary.BigEndian.AppendUint32(nil, generation)
}

// AssignGroups implements kafka.GroupBalancer.
func (k *keeper) AssignGroups(members []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	out := kafka.GroupMemberAssignments{}
	for _, m := range members {
		out[m.ID] = map[string][]int{}
	}
	holder := chooseHolder(members)
	if holder == "" {
		return out
	}
	for _, p := range partitions {
		out[holder][p.Topic] = append(out[holder][p.Topic], p.ID)
	}
	return out
}

// chooseHolder returns the ID of the member with the latest claim, or of
// the first member by ID when none claims.
func chooseHolder(members []kafka.GroupMember) string {
	if len(members) == 0 {
		return ""
	}
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b kafka.GroupMember) int { return strings.Compare(a.ID, b.ID) })
	best, bestClaim := sorted[0].ID, uint32(0)
	for _, m := range sorted {
		if c := claimOf(m.UserData); c > bestClaim {
			best, bestClaim = m.ID, c
		}
	}
	return best
}

func claimOf(userData []byte) uint32 {
	if len(userData) != 4 {
		return 0
	}
	return binary.BigEndian.Uint32(userData)
}
