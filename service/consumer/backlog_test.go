package consumer

import (
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestUnreadRecords: a partition's unread records come from the end seen
// before its first record, then from each record's high watermark; a
// labels partition is behind while it has some and its last record read
// is older than the newest example read.
func TestUnreadRecords(t *testing.T) {
	u := NewBacklog()
	u.Expect("labels", 0, 10, 20)
	u.Expect("labels", 1, 20, 20)
	u.Expect("labels", 2, 5, 9)
	u.Expect("examples", 0, 100, 700)
	behind := func(want ...int) {
		t.Helper()
		if got := u.BehindOf("labels", "examples"); !slices.Equal(got, want) {
			t.Fatalf("labels partitions behind %v, want %v", got, want)
		}
	}
	behind(0, 2) // never read
	read := func(topic string, p int, offset, hwm int64, at int64) {
		u.Read(&kafka.Message{Topic: topic, Partition: p, Offset: offset, HighWaterMark: hwm, Time: time.Unix(at, 0)})
	}
	read("examples", 0, 100, 700, 50)
	read("labels", 0, 15, 20, 40)
	read("labels", 2, 7, 9, 41) // the last record before a commit marker
	behind(0)
	read("labels", 0, 16, 20, 50) // as far in time as the examples
	behind()
	read("examples", 0, 300, 700, 60)
	behind(0)
	read("labels", 0, 19, 20, 55) // read to its end
	behind()
	read("labels", 1, 20, 30, 56) // a burst arrived: behind again
	behind(1)
	if n := u.Total("examples"); n != 398 {
		t.Fatalf("%d examples unread, want 398", n)
	}
	read("examples", 1, 40, 142, 61)
	if n := u.Total("examples"); n != 498 {
		t.Fatalf("%d examples unread, want 498", n)
	}
}

// TestUnreadForgetsPartitionsReadElsewhere: a partition expected behind
// and never read, while others are, stops counting once forgotten; before
// any record is read nothing is forgotten (the process may still be
// joining its group).
func TestUnreadForgetsPartitionsReadElsewhere(t *testing.T) {
	u := NewBacklog()
	u.Expect("labels", 0, 0, 10)
	u.Expect("labels", 1, 0, 10)
	u.Expect("examples", 0, 0, 900)
	u.ForgetExpected("labels")
	if got := u.BehindOf("labels", "examples"); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("behind %v after forgetting before any read, want [0 1]", got)
	}
	u.Read(&kafka.Message{Topic: "examples", Partition: 1, Offset: 0, HighWaterMark: 2, Time: time.Unix(20, 0)})
	u.Read(&kafka.Message{Topic: "labels", Partition: 1, Offset: 3, HighWaterMark: 10, Time: time.Unix(10, 0)})
	u.ForgetExpected("labels")
	if got := u.BehindOf("labels", "examples"); !slices.Equal(got, []int{1}) {
		t.Fatalf("behind %v, want [1]: partition 0 was never read, partition 1 is behind", got)
	}
	if n := u.Total("examples"); n != 900 {
		t.Fatalf("%d examples unread, want 900: only labels were forgotten", n)
	}
	u.ForgetExpected("examples")
	if n := u.Total("examples"); n != 0 {
		t.Fatalf("%d examples unread after forgetting, want 0", n)
	}
}
