package brokerstest

import (
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// HoldFetches makes the embedded cluster (embedded.Cluster's kfake) hold
// every fetch of one partition at offset from or later until release is
// closed, as a partition reader stuck inside a client would look from the
// brokers: no error, no records, nothing in the logs of the other
// partitions. Held fetches are answered normally once released. Fetches
// that name the topic only by ID (fetch v13+) are not held.
func HoldFetches(c *kfake.Cluster, topic string, partition int, from int64, release <-chan struct{}) {
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case <-release:
			c.DropControl()
			return nil, nil, false
		default:
		}
		if fetches(req.(*kmsg.FetchRequest), topic, int32(partition), from) {
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
}

func fetches(req *kmsg.FetchRequest, topic string, partition int32, from int64) bool {
	for _, t := range req.Topics {
		if t.Topic != topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition == partition && p.FetchOffset >= from {
				return true
			}
		}
	}
	return false
}

// RefuseProduce makes the embedded cluster refuse every produce request to
// topic alone, as brokers that cannot take its records would (kafka-go's
// writer reports the refusal at once, without retrying), until release is
// closed.
func RefuseProduce(c *kfake.Cluster, topic string, release <-chan struct{}) {
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case <-release:
			c.DropControl()
			return nil, nil, false
		default:
		}
		c.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		for _, t := range pr.Topics {
			if t.Topic != topic {
				return nil, nil, false
			}
		}
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		resp.SetVersion(pr.GetVersion())
		for _, t := range pr.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = policyViolation
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
}

// policyViolation is Kafka's error code POLICY_VIOLATION, which no client
// retries.
const policyViolation = 44
