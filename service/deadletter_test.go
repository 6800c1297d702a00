package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/publish"
)

// TestBadInputGoesToDeadLetters sends one record of every kind of bad input
// between good ones: each bad record lands on its dead-letter topic with its
// original bytes and a reason header, is counted by reason, and the good
// records around it all get their predictions.
func TestBadInputGoesToDeadLetters(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	cfg := testConfig(t, addrs, "kafka.partitions=1", "limits.max_message_bytes=20000",
		"limits.max_features=50", "limits.max_id_bytes=40", "limits.classes=ham,spam", "limits.max_class_name_bytes=10")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	badExamples := map[string]string{
		`{"id": "m1", "text": "unterminated`:                           "malformed_json",
		`{"id": 12, "text": "a number for an id"}`:                     "wrong_type",
		`{"id": "n1", "indices": [1, 2], "values": [1e400, 1]}`:        "non_finite",
		`{"id": "n2", "indices": [-3], "values": [1]}`:                 "bad_index",
		`{"id": "n3", "indices": [99999999], "values": [1]}`:           "bad_index",
		`{"id": "n4", "features": {` + manyFeatures(60) + `}}`:         "too_many_features",
		`{"id": "n5", "text": "` + strings.Repeat("big ", 6000) + `"}`: "oversized",
		`{"id": "n6", "text": "   !!! ..."}`:                           "empty_text",
		"{\"id\": \"n7\", \"text\": \"caf\xe9\"}":                      "invalid_utf8",
		`{"text": "no id at all"}`:                                     "missing_id",
		`{"id": "` + strings.Repeat("x", 50) + `", "text": "long id"}`: "id_too_long",
		`{"id": "n8", "text": "hello", "label": "` + "eggs" + `"}`:     "unknown_class",
		`{"id": "n9", "vector": [1, 2, 3]}`:                            "incompatible_vector",
		`{"id": "n10"}`:                                                "no_payload",
		``:                                                             "malformed_json", // a tombstone
	}
	badLabels := map[string]string{
		`{"id": "x", "label": "` + strings.Repeat("c", 20) + `"}`: "class_name_too_long",
		`{"id": "x", "label": "neither"}`:                         "unknown_class",
		`{"label": "ham"}`:                                        "missing_id",
		`not json`:                                                "malformed_json",
	}
	preds := readPredictions(t, ctx, addrs)
	svc, stop := runService(t, cfg)
	<-svc.Started()
	stream := newStreamWriter(t, addrs, 3)
	good := stream.write(t, ctx, 50)
	var msgs []kafka.Message
	for v := range badExamples {
		msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte("bad"), Value: []byte(v)})
	}
	for v := range badLabels {
		msgs = append(msgs, kafka.Message{Topic: "labels", Key: []byte("bad"), Value: []byte(v)})
	}
	if err := stream.w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	good = append(good, stream.write(t, ctx, 50)...)
	waitFor(t, "predictions for every good example", 30*time.Second, func() bool { return preds.has(good) == len(good) })
	want := len(badExamples) + len(badLabels)
	waitFor(t, "the dead letters", 30*time.Second, func() bool { return svc.Status().DeadLetters >= int64(want) })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkDeadLetters(t, addrs, "examples-dlq", badExamples)
	checkDeadLetters(t, addrs, "labels-dlq", badLabels)
}

func manyFeatures(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"f` + strings.Repeat("z", i%3) + string(rune('a'+i%26)) + `": 1`)
		b.WriteString(`, "g` + string(rune('a'+i%26)) + strings.Repeat("y", i) + `": 1`)
	}
	return b.String()
}

// checkDeadLetters reads a dead-letter topic and checks that it holds
// exactly the bad records, each with its reason.
func checkDeadLetters(t *testing.T, addrs []string, topic string, want map[string]string) {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := map[string]string{}
	for len(got) < len(want) {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("%s: read %d of %d dead letters: %v", topic, len(got), len(want), err)
		}
		headers := map[string]string{}
		for _, h := range m.Headers {
			headers[h.Key] = string(h.Value)
		}
		if headers[publish.HeaderError] == "" || headers[publish.HeaderSourceTopic] == "" {
			t.Fatalf("%s: dead letter without error or source headers: %v", topic, headers)
		}
		got[string(m.Value)] = headers[publish.HeaderReason]
	}
	for value, reason := range want {
		if got[value] != reason {
			t.Errorf("%s: %.60q: reason %q, want %q", topic, value, got[value], reason)
		}
	}
}
