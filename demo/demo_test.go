package demo

import (
	"context"
	"testing"

	"streamer/service"
)

func TestDemo(t *testing.T) {
	sc, err := service.LoadConfig("", ServiceOverrides())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Examples: 2000, Rate: 1000, LabelRate: 0.1, Seed: 3, Service: sc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Examples != 2000 || rep.Predictions < 2000 || rep.Labels < 100 {
		t.Fatalf("report %+v", rep)
	}
	if testing.Short() {
		return // under -race the solver is too slow to promise a model within the run
	}
	if rep.Solves == 0 || rep.Snapshots == 0 || rep.Accuracy < 0.7 || rep.SupervisedAccuracy == 0 {
		t.Fatalf("report %+v", rep)
	}
}
