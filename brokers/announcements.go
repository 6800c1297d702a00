package brokers

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go"

	"streamer/snapshot"
)

// ReadAnnouncements calls fn on every announcement of model name on topic
// (kafka.topics.versions), from its start to its end when the read
// starts, in topic order. Records that are no announcement are counted in
// skipped. A topic that does not exist is an error wrapping
// ErrUnknownTopic.
func (conn *Connection) ReadAnnouncements(ctx context.Context, topic, name string, fn func(snapshot.Announcement)) (skipped int, err error) {
	r, err := conn.announcementsRange(ctx, topic)
	if err != nil {
		return 0, err
	}
	return conn.readAnnouncements(ctx, topic, name, r.First, r.End, fn)
}

// NewestAnnounced returns the highest epoch and the highest version of
// the announcements of model name on topic; found is false when there is
// none. It reads back from the topic's end, announcementPage records at a
// time, up to the first page that holds one of the model's: a learner
// announces its versions in order, and a restarted one numbers after the
// highest announced, so the highest are among the last. (The late
// announcements of a learner that lost its lease to a successor come
// within seconds of the successor's first: the same page, or the next.)
// A topic that does not exist holds none.
func (conn *Connection) NewestAnnounced(ctx context.Context, topic, name string) (epoch, version uint64, found bool, err error) {
	r, err := conn.announcementsRange(ctx, topic)
	if errors.Is(err, ErrUnknownTopic) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	for to := r.End; to > r.First && !found; to -= announcementPage {
		from := max(r.First, to-announcementPage)
		_, err := conn.readAnnouncements(ctx, topic, name, from, to, func(a snapshot.Announcement) {
			epoch, version, found = max(epoch, a.Epoch), max(version, a.Version), true
		})
		if err != nil {
			return 0, 0, false, err
		}
	}
	return epoch, version, found, nil
}

// announcementPage is the records NewestAnnounced reads at a time: some
// 200 kB of announcements.
const announcementPage = 1024

func (conn *Connection) announcementsRange(ctx context.Context, topic string) (OffsetRange, error) {
	ranges, err := conn.Offsets(ctx, topic, []int{0})
	if errors.Is(err, kafka.UnknownTopicOrPartition) {
		return OffsetRange{}, fmt.Errorf("read announcements of %s: %w", topic, ErrUnknownTopic)
	}
	if err != nil {
		return OffsetRange{}, err
	}
	return ranges[0], nil
}

// readAnnouncements calls fn on the announcements of model name in
// offsets [from, to) of topic's partition.
func (conn *Connection) readAnnouncements(ctx context.Context, topic, name string, from, to int64, fn func(snapshot.Announcement)) (skipped int, err error) {
	err = conn.ReadRange(ctx, topic, 0, from, to, func(m kafka.Message) error {
		if string(m.Key) != name {
			return nil
		}
		a, err := snapshot.DecodeAnnouncement(m.Value)
		if err != nil || a.Name != name {
			skipped++
			return nil
		}
		fn(a)
		return nil
	})
	if err != nil {
		return skipped, fmt.Errorf("read announcements: %w", err)
	}
	return skipped, nil
}
