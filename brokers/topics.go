package brokers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// Topic describes a topic the service writes to and creates when missing.
type Topic struct {
	Name       string
	Partitions int // 0 means 1
	Compacted  bool
	// Retention, when > 0, sets the topic's retention.ms with
	// cleanup.policy=delete: records older than that are deleted, whatever
	// their key (a history, where compaction would keep only the newest
	// record of a key). It cannot be combined with Compacted.
	Retention time.Duration
	// MaxMessageBytes sets the topic's max.message.bytes; 0 leaves the
	// broker's default.
	MaxMessageBytes int
}

// EnsureTopics creates the topics that do not exist yet; existing ones are
// left as they are.
func (c *Connection) EnsureTopics(ctx context.Context, topics ...Topic) error {
	req := &kafka.CreateTopicsRequest{}
	for _, t := range topics {
		cfg := kafka.TopicConfig{Topic: t.Name, NumPartitions: max(t.Partitions, 1), ReplicationFactor: 1}
		if t.Compacted {
			cfg.ConfigEntries = append(cfg.ConfigEntries, kafka.ConfigEntry{ConfigName: "cleanup.policy", ConfigValue: "compact"})
		}
		if t.Retention > 0 {
			if t.Compacted {
				return fmt.Errorf("create topic %s: a compacted topic has no retention", t.Name)
			}
			cfg.ConfigEntries = append(cfg.ConfigEntries,
				kafka.ConfigEntry{ConfigName: "cleanup.policy", ConfigValue: "delete"},
				kafka.ConfigEntry{ConfigName: "retention.ms", ConfigValue: strconv.FormatInt(t.Retention.Milliseconds(), 10)})
		}
		if t.MaxMessageBytes > 0 {
			cfg.ConfigEntries = append(cfg.ConfigEntries, kafka.ConfigEntry{ConfigName: "max.message.bytes", ConfigValue: strconv.Itoa(t.MaxMessageBytes)})
		}
		req.Topics = append(req.Topics, cfg)
	}
	resp, err := c.Client().CreateTopics(ctx, req)
	if err != nil {
		return fmt.Errorf("create topics: %w", c.Explain(ctx, err))
	}
	for name, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
	}
	return nil
}

// ErrUnknownTopic is returned for a topic the cluster does not have.
var ErrUnknownTopic = errors.New("unknown topic")

// Partitions returns the partition numbers of a topic.
func (c *Connection) Partitions(ctx context.Context, topic string) ([]int, error) {
	meta, err := c.Client().Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, c.Explain(ctx, err))
	}
	for _, t := range meta.Topics {
		if t.Name != topic {
			continue
		}
		if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("metadata of %s: %w", topic, ErrUnknownTopic)
		}
		if t.Error != nil {
			return nil, fmt.Errorf("metadata of %s: %w", topic, t.Error)
		}
		ps := make([]int, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			ps = append(ps, p.ID)
		}
		return ps, nil
	}
	return nil, fmt.Errorf("metadata of %s: %w", topic, ErrUnknownTopic)
}

// OffsetRange is the first offset and the offset after the last record of
// a partition.
type OffsetRange struct {
	First, End int64
}

// Offsets returns the offset range of each listed partition of topic.
func (c *Connection) Offsets(ctx context.Context, topic string, partitions []int) (map[int]OffsetRange, error) {
	var reqs []kafka.OffsetRequest
	for _, p := range partitions {
		reqs = append(reqs, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
	}
	resp, err := c.Client().ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("list offsets of %s: %w", topic, c.Explain(ctx, err))
	}
	out := map[int]OffsetRange{}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("list offsets of %s[%d]: %w", topic, po.Partition, po.Error)
		}
		out[po.Partition] = OffsetRange{First: po.FirstOffset, End: po.LastOffset}
	}
	return out, nil
}

// OffsetsForTime returns, per listed partition, the offset of the first
// record whose time is at or after unixMillis, or -1 when there is none.
func (c *Connection) OffsetsForTime(ctx context.Context, topic string, partitions []int, unixMillis int64) (map[int]int64, error) {
	var reqs []kafka.OffsetRequest
	for _, p := range partitions {
		reqs = append(reqs, kafka.OffsetRequest{Partition: p, Timestamp: unixMillis})
	}
	resp, err := c.Client().ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("offsets for time in %s: %w", topic, c.Explain(ctx, err))
	}
	out := map[int]int64{}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("offsets for time in %s[%d]: %w", topic, po.Partition, po.Error)
		}
		// The answer to a time query is the one offset of Offsets; none (or
		// -1) means no record is that late.
		off := int64(-1)
		for o := range po.Offsets {
			off = o
		}
		out[po.Partition] = off
	}
	return out, nil
}

// CommittedOffsets returns the offsets group committed for the listed
// partitions of topic; a partition without a commit is absent.
func (c *Connection) CommittedOffsets(ctx context.Context, group, topic string, partitions []int) (map[int]int64, error) {
	resp, err := c.Client().OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: partitions}})
	if err != nil {
		return nil, fmt.Errorf("committed offsets of %s in %s: %w", group, topic, c.Explain(ctx, err))
	}
	if errors.Is(resp.Error, kafka.GroupIdNotFound) {
		return map[int]int64{}, nil // a group that never committed
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("committed offsets of %s in %s: %w", group, topic, resp.Error)
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("committed offsets of %s in %s[%d]: %w", group, topic, p.Partition, p.Error)
		}
		if p.CommittedOffset >= 0 {
			out[p.Partition] = p.CommittedOffset
		}
	}
	return out, nil
}
