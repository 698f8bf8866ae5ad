package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The first SIGINT or SIGTERM cancels the run: running containers are
	// removed and finished reports kept. Then the default handling returns,
	// so a second one ends the process at once.
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		signal.Stop(sigs)
		fmt.Fprintf(os.Stderr, "\neval: %v: stopping; removing containers and keeping finished reports (interrupt again to quit at once)\n", s)
		cancel()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}
