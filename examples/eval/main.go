package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// sandboxNoun names, in the message the first interrupt prints, what a
// stopping run removes: containers, or pods once the run has chosen a
// Kubernetes cluster.
var sandboxNoun atomic.Value

func init() { sandboxNoun.Store("containers") }

func main() {
	// The first SIGINT or SIGTERM cancels the run: running containers (or
	// pods) are removed and finished reports kept. Then the default handling returns,
	// so a second one ends the process at once.
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		signal.Stop(sigs)
		fmt.Fprintf(os.Stderr, "\neval: %v: stopping; deleting %s and keeping finished reports (interrupt again to quit at once)\n", s, sandboxNoun.Load())
		cancel()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}
