package brokers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/segmentio/kafka-go"

	"streamer/snapshot"
)

// ReadSnapshots reads the snapshot topic from its start to its current end
// and returns the newest complete snapshot of model name; ok is false when
// there is none. Records that cannot be used are counted in skipped.
func (conn *Connection) ReadSnapshots(ctx context.Context, topic, name string) (c snapshot.Complete, ok bool, skipped int, err error) {
	asm := snapshot.NewAssembler()
	if skipped, err = conn.scanSnapshots(ctx, topic, asm); err != nil {
		return c, false, skipped, err
	}
	c, ok = asm.Latest(name)
	return c, ok, skipped, nil
}

// ReadSnapshotVersion returns the encoded snapshot of model name that sel
// names from the snapshot topic; of several epochs that made the version
// (sel.AnyEpoch), the newest's.
func (conn *Connection) ReadSnapshotVersion(ctx context.Context, topic, name string, sel snapshot.Selector) ([]byte, error) {
	var found []byte
	var epoch uint64
	asm := snapshot.NewAssembler()
	asm.OnComplete = func(n string, c snapshot.Complete) {
		if n == name && sel.Matches(c.Stamp()) && (found == nil || c.Epoch >= epoch) {
			found, epoch = c.Data, c.Epoch
		}
	}
	if _, err := conn.scanSnapshots(ctx, topic, asm); err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: model %q %v is not on topic %s (compaction keeps the newest two)", ErrNoSnapshot, name, sel, topic)
	}
	return found, nil
}

// FindSnapshotVersion returns the encoded snapshot of model name that sel
// names from the first of topics that holds it: the history topic, which
// keeps every version for its retention, then the compacted snapshot
// topic, which keeps the newest. Topics that do not exist are passed over.
func (conn *Connection) FindSnapshotVersion(ctx context.Context, name string, sel snapshot.Selector, topics ...string) ([]byte, error) {
	var searched []string
	for _, topic := range topics {
		if topic == "" {
			continue
		}
		data, err := conn.ReadSnapshotVersion(ctx, topic, name, sel)
		if err == nil {
			return data, nil
		}
		if !errors.Is(err, ErrNoSnapshot) && !errors.Is(err, ErrUnknownTopic) {
			return nil, err
		}
		searched = append(searched, topic)
	}
	return nil, fmt.Errorf("%w: model %q %v is on none of the topics %v", ErrNoSnapshot, name, sel, searched)
}

// ResolveVersion returns the stamp of the snapshot of model name that sel
// names on topics, for a person who named a version: with sel.AnyEpoch,
// the version must have been made under one epoch only, else the error
// wraps ErrAmbiguousVersion and lists the epochs; an exact stamp must be
// there, else the error wraps ErrNoSnapshot and lists the epochs that made
// the version. Topics that do not exist are passed over.
func (conn *Connection) ResolveVersion(ctx context.Context, name string, sel snapshot.Selector, topics ...string) (snapshot.Stamp, error) {
	epochs, err := conn.versionEpochs(ctx, name, sel.Version, topics)
	if err != nil {
		return snapshot.Stamp{}, err
	}
	switch {
	case len(epochs) == 0:
		return snapshot.Stamp{}, fmt.Errorf("%w: model %q version %d is on none of the topics %v", ErrNoSnapshot, name, sel.Version, topics)
	case !sel.AnyEpoch && !slices.Contains(epochs, sel.Epoch):
		return snapshot.Stamp{}, fmt.Errorf("%w: model %q has no %v (version %d is of epochs %s)", ErrNoSnapshot, name, sel, sel.Version, listEpochs(epochs))
	case sel.AnyEpoch && len(epochs) > 1:
		return snapshot.Stamp{}, fmt.Errorf("%w: model %q version %d was made under epochs %s", ErrAmbiguousVersion, name, sel.Version, listEpochs(epochs))
	case sel.AnyEpoch:
		return snapshot.Stamp{Epoch: epochs[0], Version: sel.Version}, nil
	}
	return sel.Stamp, nil
}

// versionEpochs returns the epochs under which model name's version is on
// topics, in order.
func (conn *Connection) versionEpochs(ctx context.Context, name string, version uint64, topics []string) ([]uint64, error) {
	var epochs []uint64
	for _, topic := range topics {
		if topic == "" {
			continue
		}
		_, err := conn.EachSnapshot(ctx, topic, func(model string, c snapshot.Complete) {
			if model == name && c.Version == version && !slices.Contains(epochs, c.Epoch) {
				epochs = append(epochs, c.Epoch)
			}
		})
		if err != nil && !errors.Is(err, ErrUnknownTopic) {
			return nil, err
		}
	}
	slices.Sort(epochs)
	return epochs, nil
}

func listEpochs(epochs []uint64) string {
	s := make([]string, len(epochs))
	for i, e := range epochs {
		s[i] = strconv.FormatUint(e, 10)
	}
	return strings.Join(s, ", ")
}

// SnapshotHistory returns the history entry of every version of model
// name on topics, by version; a version on several topics (the history
// topic and the compacted one) is described once, as the first topic has
// it. Topics that do not exist are passed over. Snapshots that cannot be
// used or decoded are counted in skipped.
func (conn *Connection) SnapshotHistory(ctx context.Context, name string, topics ...string) (entries []snapshot.Entry, skipped int, err error) {
	byStamp := map[snapshot.Stamp]snapshot.Entry{}
	for _, topic := range topics {
		if topic == "" {
			continue
		}
		seen := map[snapshot.Stamp]bool{}
		n, err := conn.EachSnapshot(ctx, topic, func(model string, c snapshot.Complete) {
			stamp := snapshot.Stamp{Epoch: c.Epoch, Version: c.Version}
			if _, known := byStamp[stamp]; model != name || (known && !seen[stamp]) {
				return
			}
			snap, err := snapshot.Decode(c.Data)
			if err != nil {
				skipped++
				return
			}
			// A version written again (a restart's final snapshot) is
			// described as last written.
			byStamp[stamp], seen[stamp] = snapshot.Describe(snap, len(c.Data)), true
		})
		skipped += n
		if err != nil && !errors.Is(err, ErrUnknownTopic) {
			return nil, skipped, err
		}
	}
	for _, e := range byStamp {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b snapshot.Entry) int {
		return cmp.Or(cmp.Compare(a.Epoch, b.Epoch), cmp.Compare(a.Version, b.Version))
	})
	return entries, skipped, nil
}

// EachSnapshot reads topic from its start to its current end and calls fn
// on every complete snapshot, of every model, in topic order: the history
// of the models whose snapshots it holds. Records that cannot be used are
// counted in skipped, such as the chunks of a snapshot whose first chunks
// retention deleted. A topic that does not exist is an error wrapping
// ErrUnknownTopic.
func (conn *Connection) EachSnapshot(ctx context.Context, topic string, fn func(name string, c snapshot.Complete)) (skipped int, err error) {
	asm := snapshot.NewAssembler()
	asm.OnComplete = fn
	return conn.scanSnapshots(ctx, topic, asm)
}

// scanSnapshots feeds every record of the snapshot topic, up to its end
// when the scan starts, to asm.
func (conn *Connection) scanSnapshots(ctx context.Context, topic string, asm *snapshot.Assembler) (skipped int, err error) {
	ranges, err := conn.Offsets(ctx, topic, []int{0})
	if errors.Is(err, kafka.UnknownTopicOrPartition) {
		return 0, fmt.Errorf("read snapshots of %s: %w", topic, ErrUnknownTopic)
	}
	if err != nil {
		return 0, err
	}
	r := ranges[0]
	if r.End <= r.First {
		return 0, nil
	}
	err = conn.ReadRange(ctx, topic, 0, r.First, r.End, func(m kafka.Message) error {
		rec := snapshot.Record{Key: string(m.Key), Value: m.Value, Headers: map[string]string{}}
		for _, h := range m.Headers {
			rec.Headers[h.Key] = string(h.Value)
		}
		if asm.Add(rec) != nil {
			skipped++
		}
		return nil
	})
	if err != nil {
		return skipped, fmt.Errorf("read snapshots: %w", err)
	}
	return skipped, nil
}

// ErrNoSnapshot says that no snapshot of the model was found.
var ErrNoSnapshot = errors.New("no snapshot")

// ErrAmbiguousVersion says that a version was named without an epoch and
// several learners' terms made one of that number.
var ErrAmbiguousVersion = errors.New("version of several epochs")
