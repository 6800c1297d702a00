package snapshot

import (
	"bytes"
	"strings"
	"testing"
)

// TestEpochRoundTrip: a snapshot keeps its epoch through the codec, and one
// of epoch 0 is encoded as before epochs were kept (no epoch in the
// header), so that older builds and older snapshots agree.
func TestEpochRoundTrip(t *testing.T) {
	s := testSnapshot(2, 50, 0.5, 1)
	s.Epoch = 7
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stamp() != (Stamp{Epoch: 7, Version: 42}) {
		t.Fatalf("stamp after round trip = %v", got.Stamp())
	}
	s.Epoch = 0
	if data, err = Encode(s); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"epoch"`)) {
		t.Fatal("a snapshot of epoch 0 names an epoch in its header")
	}
	if got, err = Decode(data); err != nil || got.Epoch != 0 {
		t.Fatalf("epoch 0: %v, %v", got, err)
	}
}

func TestSplitKeysCarryTheEpoch(t *testing.T) {
	big := encoded(t, 3, 3000)
	for _, r := range Split("m", Stamp{Version: 3}, big, 2048) {
		if strings.Contains(r.Key, "@") || r.Headers[HeaderEpoch] != "" {
			t.Fatalf("epoch 0 record keyed %q with headers %v: want the keys of before epochs", r.Key, r.Headers)
		}
	}
	recs := Split("m", Stamp{Epoch: 5, Version: 3}, big, 2048)
	for _, r := range recs {
		if !strings.HasPrefix(r.Key, "m@5") || r.Headers[HeaderEpoch] != "5" {
			t.Fatalf("epoch 5 record keyed %q with headers %v", r.Key, r.Headers)
		}
	}
	if recs[len(recs)-1].Key != "m@5" {
		t.Fatalf("manifest keyed %q", recs[len(recs)-1].Key)
	}
}

// TestFencedWriterLosesAfterCompaction: the learner of epoch 2 took over
// while the one of epoch 1 was paused; the paused one wakes up and writes
// higher versions, chunk by chunk, interleaved with its successor's. After
// compaction, a reader keeps the successor's newest snapshot.
func TestFencedWriterLosesAfterCompaction(t *testing.T) {
	var log []Record
	log = append(log, Split("m", Stamp{Epoch: 1, Version: 10}, encoded(t, 10, 3000), 2048)...)
	newer := Split("m", Stamp{Epoch: 2, Version: 11}, encoded(t, 11, 3000), 2048)
	late := Split("m", Stamp{Epoch: 1, Version: 30}, encoded(t, 30, 3000), 2048)
	for i := range max(len(newer), len(late)) {
		if i < len(newer) {
			log = append(log, newer[i])
		}
		if i < len(late) {
			log = append(log, late[i])
		}
	}
	for _, recs := range [][]Record{log, compact(log)} {
		a := NewAssembler()
		for _, r := range recs {
			_ = a.Add(r)
		}
		got, ok := a.Latest("m")
		if !ok || got.Stamp() != (Stamp{Epoch: 2, Version: 11}) {
			t.Fatalf("latest = %v, %v; want e2/v11", got.Stamp(), ok)
		}
		if _, err := Decode(got.Data); err != nil {
			t.Fatal(err)
		}
	}
}
