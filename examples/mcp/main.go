package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// run serves until the client goes (stdio) or ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return exitUsage
	}
	logOut := stderr
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "mcp: --log_file: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		logOut = f
	}
	log := slog.New(slog.NewJSONHandler(logOut, nil))

	tmp, err := newTempDir(cfg.Name, log)
	if err != nil {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return exitFailure
	}
	defer func() {
		if err := tmp.Close(); err != nil {
			fmt.Fprintf(stderr, "mcp: clean up: %v\n", err)
		}
	}()
	// Libraries that make temporary files of their own (the egress proxy's
	// socket directory, the evaluator's work trees) make them under the
	// server's directory too.
	if err := os.MkdirAll(tmp.path("tmp"), 0o700); err == nil {
		os.Setenv("TMPDIR", tmp.path("tmp"))
	}
	if cfg.StateDir == "" {
		cfg.StateDir = tmp.path("agent")
	}

	box, err := newBackend(ctx, cfg, log)
	if err != nil {
		hint := " (is the Docker engine running and DOCKER_HOST right?)"
		if cfg.Kubeconfig != "" {
			hint = ""
		}
		fmt.Fprintf(stderr, "mcp: %v%s\n", err, hint)
		return exitFailure
	}
	defer func() {
		if err := box.Close(); err != nil {
			fmt.Fprintf(stderr, "mcp: clean up: %v\n", err)
		}
	}()
	evals, err := newEvaluator(cfg, box.client)
	if err != nil {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return exitFailure
	}
	defer evals.Close()

	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	s := &server{
		cfg: cfg, base: base, box: box, sessions: newSessions(), jobs: newJobs(base, cfg.IdleExpiry),
		store: newStore(cfg.StoreLimit), evals: evals, calls: log, running: make(chan struct{}, cfg.MaxRunning),
		readMem: semaphore.NewWeighted(cfg.ReadMemory),
	}
	defer s.jobs.dropAll()
	s.tasks = newTaskEnvs(cfg, box.client, evals)
	defer func() {
		if err := s.tasks.Close(); err != nil {
			fmt.Fprintf(stderr, "mcp: clean up: %v\n", err)
		}
	}()
	if err := s.tasks.prepare(ctx, func(err error) { fmt.Fprintf(stderr, "mcp: warning: %v\n", err) }); err != nil {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return exitUsage
	}
	// Stopped first at exit: the deferred closes above end what every
	// client holds.
	s.idle = newIdleClients(cfg.ClientIdle, s.dropOwner, s.jobs.running)
	defer s.idle.Close()
	srv := s.newMCPServer()

	if cfg.HTTPAddr == "" {
		err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
		if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, io.EOF) {
			fmt.Fprintf(stderr, "mcp: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	return serveHTTP(ctx, cfg, srv, stderr)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves streamable HTTP at /mcp behind the bearer tokens:
// protocol 2026-07-28 statelessly, the earlier versions with MCP sessions.
func serveHTTP(ctx context.Context, cfg config, srv *mcp.Server, stderr io.Writer) int {
	clients := cfg.Clients
	if len(clients) == 0 {
		token := cfg.Token
		if token == "" {
			token = newToken()
			fmt.Fprintf(stderr, "mcp: generated bearer token (set --token or SWEBOX_MCP_TOKEN to choose one): %s\n", token)
		}
		clients = []clientToken{{name: defaultClient, token: []byte(token)}}
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		fmt.Fprintf(stderr, "mcp: listen: %v\n", err)
		return exitFailure
	}
	getServer := func(*http.Request) *mcp.Server { return srv }
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{SessionTimeout: cfg.IdleExpiry})
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", requireToken(clients, byProtocol(stateful, stateless)))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "mcp: serving MCP on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "mcp: serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return exitOK
}

// newToken is 256 random bits, hex-encoded.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}
