package control_test

import (
	"context"
	"fmt"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/control"
	"streamer/snapshot"
)

// A process reads the control topic to its end before it scores, then
// follows it on a goroutine of its own and obeys each new order.
func ExampleFollower() {
	cluster, err := embedded.Start(embedded.Config{})
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	conn, err := brokers.Config{Brokers: []string{brokers.Embedded}}.Connect(cluster.Addrs())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	ctx := context.Background()
	// What `streamer model pin --version 7 --epoch 2` writes.
	if err := control.Write(ctx, conn, "model-control", control.PinStamp("default", snapshot.Stamp{Epoch: 2, Version: 7})); err != nil {
		panic(err)
	}
	f := control.NewFollower(conn, "model-control", "default", nil)
	if err := f.CatchUp(ctx); err != nil {
		panic(err)
	}
	sel, pinned := f.Current()
	fmt.Println(sel, pinned)
	// Output: version 7 of epoch 2 true
}
