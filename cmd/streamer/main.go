// Command streamer classifies a Kafka stream in real time while it learns
// from the few labels that arrive late. Its subcommands run the service, an
// embedded broker and a demo, fit and evaluate models offline, replay topics
// and measure the solver and the graph. This package only wires flags and
// configuration to the packages that do the work.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "streamer:", err)
		stop()
		os.Exit(1)
	}
}
