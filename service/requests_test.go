package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"streamer/pipeline"
	"streamer/synth"
)

// TestLabelRequestsWithKcat runs the service with a budget of label
// requests and plays a labeler with kcat: the requests appear on their
// topic within the budget, never for a labeled example nor twice, and a
// label sent back for one is learned by the next solve.
func TestLabelRequestsWithKcat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the service on the embedded broker for several seconds")
	}
	needKcat(t)
	cluster := startCluster(t)
	broker := cluster.Addrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := testConfig(t, cluster.Addrs(), "kafka.partitions=1", "active.budget=10%", "active.random_share=0.2")
	svc, stop := runService(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	<-svc.Started()

	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 3, Topics: 2})
	var examples, labels bytes.Buffer
	const n = 200
	truth, labeled := map[string]string{}, map[string]bool{}
	for i := range n {
		d := gen.Next()
		v, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text})
		fmt.Fprintf(&examples, "%s\t%s\n", d.ID, v)
		truth[d.ID] = d.Label
		if i%10 == 0 {
			l, _ := json.Marshal(map[string]string{"id": d.ID, "label": d.Label})
			fmt.Fprintf(&labels, "%s\t%s\n", d.ID, l)
			labeled[d.ID] = true
		}
	}
	kcat(t, ctx, labels.Bytes(), "-P", "-b", broker, "-t", "labels", "-K", "\t")
	kcat(t, ctx, examples.Bytes(), "-P", "-b", broker, "-t", "examples", "-K", "\t")
	waitFor(t, "every example consumed", time.Minute, func() bool { return svc.Status().Pipeline.Examples >= n })
	waitFor(t, "a model", time.Minute, func() bool { return svc.pipe.Learner().InForce().Model.Ready() })

	var reqs []pipeline.LabelRequest
	waitFor(t, "the budget's requests", time.Minute, func() bool {
		reqs = readRequests(t, ctx, broker)
		return len(reqs) >= n/10-1
	})
	seen := map[string]bool{}
	for _, r := range reqs {
		switch {
		case seen[r.ID]:
			t.Fatalf("%s requested twice", r.ID)
		case labeled[r.ID]:
			t.Fatalf("%s requested though labeled", r.ID)
		case r.Source.Topic != "examples" || r.Expires.Before(r.At):
			t.Fatalf("request %+v: source or expiry wrong", r)
		}
		seen[r.ID] = true
	}
	if len(reqs) > n/10 {
		t.Fatalf("%d requests for %d examples at a budget of 10%%", len(reqs), n)
	}

	// Answer the last request; the next solve learns from its label.
	answer := reqs[len(reqs)-1]
	before := svc.pipe.Learner().InForce().SolvedOn.Labeled
	l, _ := json.Marshal(map[string]string{"id": answer.ID, "label": truth[answer.ID]})
	kcat(t, ctx, []byte(answer.ID+"\t"+string(l)+"\n"), "-P", "-b", broker, "-t", "labels", "-K", "\t")
	waitFor(t, "the answer learned", time.Minute, func() bool {
		return svc.pipe.Learner().InForce().SolvedOn.Labeled == before+1
	})
	st, _ := svc.pipe.RequestStats()
	if got := st.Answered[answer.Reason.Strategy]; got != 1 {
		t.Errorf("%d answered requests of strategy %s, want 1", got, answer.Reason.Strategy)
	}
}

// readRequests reads every label request on the topic so far.
func readRequests(t *testing.T, ctx context.Context, broker string) []pipeline.LabelRequest {
	out := kcat(t, ctx, nil, "-C", "-b", broker, "-t", "label-requests", "-o", "beginning", "-e", "-q", "-f", "%k\t%s\n")
	var reqs []pipeline.LabelRequest
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		key, value, _ := strings.Cut(line, "\t")
		var r pipeline.LabelRequest
		if err := json.Unmarshal([]byte(value), &r); err != nil {
			t.Fatalf("label request %q: %v", line, err)
		}
		if key != r.ID {
			t.Fatalf("request keyed %q for %q", key, r.ID)
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// TestLabelRequestsAcrossARestart: a restarted learner reads back the
// requests made before it: an answer to one after the restart counts as
// one, and it asks for none of their examples again.
func TestLabelRequestsAcrossARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the service on the embedded broker twice")
	}
	needKcat(t)
	f := newFixture(t, 4)
	ctx, addrs, stream := f.ctx, f.addrs, f.stream
	cfg := testConfig(t, addrs, "kafka.partitions=1", "active.budget=20%", "active.random_share=0.2")
	run := func(svc *Service) {
		f.feed(t, svc, 3, 100, false)
		waitFor(t, "a model", time.Minute, func() bool { return svc.pipe.Learner().InForce().Model.Ready() })
	}
	svc, stop := runService(t, cfg)
	run(svc)
	var before []pipeline.LabelRequest
	waitFor(t, "requests", time.Minute, func() bool { before = readRequests(t, ctx, addrs[0]); return len(before) >= 20 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	svc2, stop2 := runService(t, cfg)
	defer func() {
		if err := stop2(); err != nil {
			t.Error(err)
		}
	}()
	<-svc2.Started()
	var old pipeline.LabelRequest
	for _, r := range before {
		if _, labeled := stream.labeled[r.ID]; !labeled && svc2.pipe.Learner().Contains(r.ID) {
			old = r
		}
	}
	if old.ID == "" {
		t.Fatal("no unanswered request of an example in the window")
	}
	l, _ := json.Marshal(map[string]string{"id": old.ID, "label": stream.truth[old.ID]})
	kcat(t, ctx, []byte(old.ID+"\t"+string(l)+"\n"), "-P", "-b", addrs[0], "-t", "labels", "-K", "\t")
	waitFor(t, "the answer to a request made before the restart", time.Minute, func() bool {
		st, _ := svc2.pipe.RequestStats()
		return st.Answered[old.Reason.Strategy] == 1
	})

	run(svc2)
	var all []pipeline.LabelRequest
	waitFor(t, "requests after the restart", time.Minute, func() bool {
		all = readRequests(t, ctx, addrs[0])
		return len(all) >= len(before)+20
	})
	seen := map[string]bool{}
	for _, r := range all {
		if seen[r.ID] {
			t.Fatalf("%s requested twice, across the restart", r.ID)
		}
		seen[r.ID] = true
	}
}
