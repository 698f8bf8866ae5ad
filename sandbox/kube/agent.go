package kube

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/agentbin"
	"github.com/swebox/swebox/sandbox/internal/execagent"
	"github.com/swebox/swebox/sandbox/internal/seam"
)

// A pod runs the same exec agent as a Docker sandbox (package execagent),
// so that a command costs a stream on a connection the host already holds
// instead of a new exec through the API server and the kubelet.
//
// How the agent gets in. A registry is not assumed and the pod's security
// context is not widened (read-only root, non-root, no capabilities, no
// service-account token), so the agent is neither in the image nor in an init
// container of another image: the host copies the static binary embedded in
// the module (agentbin) into the pod's /tmp, a memory emptyDir that
// is writable and executable, with one exec that pipes it into cat, right
// after the pod starts and before any command of the caller runs. A second
// exec starts it under the same ulimit wrapper as every exec'd command (the
// file size limit the agent sets itself, after its copy into memory), so its
// commands inherit the pod's limits. It removes the copy once running and
// re-executes itself from /proc/self/exe for each command's shim, so nothing
// in the pod can swap the binary the agent uses.
//
// How the host reaches it. The agent listens on a free port of the pod's
// loopback, and the host holds one port-forward connection (SPDY, through
// the API server to the kubelet) per pod; each command opens a new pair of
// streams on it, which costs about an API round trip where a new exec
// costs a new upgraded connection through the API server to the kubelet and
// a process start by the runtime (BenchmarkKubeTransports measures the
// three). One long-lived exec carrying every command over its stdin would
// need a multiplexing protocol of its own inside the exec's, and a pod IP is
// unreachable from outside the cluster and needs a hole in the pod's
// default-deny NetworkPolicy; the port-forward stream needs neither.
//
// Why a token. The pod's network namespace is shared by every process in
// it, so any command of the sandbox can connect to the agent's port (no
// NetworkPolicy governs loopback). Each connection must therefore first
// present a secret: 32 random bytes the host writes to the agent's
// standard input, which no other process can read (the agent is
// non-dumpable, so /proc/PID/fd and /proc/PID/mem are closed to the
// sandbox's user), and which is in no command line or environment. The
// agent closes a connection that does not present it, unanswered
// (TestKubeAgentRefusesTheSandbox proves it from inside a pod).
//
// Lifetime. The agent exits when its standard input, the exec stream the
// host holds, ends: when the host process ends or removes the pod. The host
// writes a newline to it every agentKeepalive, so that a kubelet's
// streaming-connection-idle-timeout does not end it; a port-forward
// connection that ends is dialled again. When the agent does not start (no
// /bin/sh or cat, a node architecture without a binary, port-forward
// forbidden by RBAC) or ends, commands go through the API server's exec,
// and the log says why.

// Timing of the pod agent.
const (
	// agentStartTimeout bounds the copy and start of the agent.
	agentStartTimeout = 30 * time.Second
	// agentKeepalive is how often the host writes to the agent's input.
	agentKeepalive = 10 * time.Minute
)

// agentDir is where the agent's binary is copied to: the pod's /tmp, an
// emptyDir (podFor), as the root filesystem is read-only.
const agentDir = "/tmp"

// podAgent is the exec agent of one pod.
type podAgent struct {
	k     *Backend
	pod   string
	port  string
	token []byte

	stopLease func()        // ends the agent's input and so the agent
	ended     chan struct{} // closed once the agent's exec stream ended
	endErr    error         // why; set before ended is closed

	mu     sync.Mutex
	pf     httpstream.Connection // the port-forward connection; nil until dialled
	closed bool
	nextID atomic.Int64

	// spare is a stream dialled ahead for the next command (see Dial);
	// guarded by mu.
	spare    *agentConn
	dialling bool
}

// spareMaxAge is how long a spare stream waits for a command: well within
// the agent's wait for a command on a connection (10 s), after which it
// drops it.
const spareMaxAge = 5 * time.Second

// spareDialTimeout bounds the opening of a spare stream.
const spareDialTimeout = 10 * time.Second

// StartAgent copies the agent into the running pod id, starts it and
// connects to it; see the comment at the top of this file.
func (k *Backend) StartAgent(ctx context.Context, id string) (seam.Agent, error) {
	info := k.info(id)
	if info == nil {
		return nil, fmt.Errorf("pod %s was not created by this client", id)
	}
	ctx, cancel := context.WithTimeout(ctx, agentStartTimeout)
	defer cancel()
	bin, err := k.agentBinary(ctx, id)
	if err != nil {
		return nil, err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	path := agentDir + "/.swebox-agent-" + hex.EncodeToString(rnd[:])
	var errb bytes.Buffer
	// set -C: the name is fresh, and cat must not write through anything
	// already there.
	code, err := k.execStream(ctx, id, []string{"/bin/sh", "-c", `umask 077; set -C; cat > "$0" && chmod 500 "$0"`, path},
		bytes.NewReader(bin), io.Discard, &limitedBuffer{buf: &errb, max: 4 << 10})
	if err != nil {
		return nil, fmt.Errorf("copy the exec agent in: %w", err)
	}
	if code != 0 {
		return nil, fmt.Errorf("copy the exec agent in: exit %d: %s", code, strings.TrimSpace(errb.String()))
	}
	token := make([]byte, execagent.TokenLen)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	a := &podAgent{k: k, pod: id, token: token, ended: make(chan struct{})}
	port, err := a.start(ctx, info.spec, path)
	if err != nil {
		// An agent that started removed its copy; one that did not must
		// not leave it to take space of the pod's /tmp.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = k.execStream(rctx, id, []string{"rm", "-f", path}, nil, nil, nil)
		return nil, err
	}
	a.port = port
	// One command proves the whole path before the sandbox counts on it.
	if err := a.probe(ctx); err != nil {
		_ = a.Close()
		return nil, fmt.Errorf("reach the exec agent: %w", err)
	}
	return a, nil
}

// agentBinary returns the agent for the architecture of the pod's node.
func (k *Backend) agentBinary(ctx context.Context, id string) ([]byte, error) {
	p, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, id, metav1.GetOptions{})
	if err != nil {
		return nil, kubeErr("read pod", err)
	}
	n, found, err := k.node(ctx, p.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("node %s of pod %s is not in the node list", p.Spec.NodeName, id)
	}
	return agentbin.Binary(n.Status.NodeInfo.Architecture)
}

// agentCommand starts the agent at path under the spec's limits but the
// file size limit, which the agent sets on itself once it has copied its
// binary into memory (a copy larger than a small limit would fail), so that
// the commands it starts inherit every limit.
func agentCommand(s sandbox.Spec, path string) []string {
	return wrapFileSize(s, "unlimited", "", false, []string{path, execagent.TCPArg, strconv.FormatInt(fileSizeBlocks(s)*512, 10)})
}

// start starts the copied agent and returns its port once it listens.
func (a *podAgent) start(ctx context.Context, s sandbox.Spec, path string) (string, error) {
	k := a.k
	req := k.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(k.ns).Name(a.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: kubeContainer, Command: agentCommand(s, path),
			Stdin: true, Stdout: true, Stderr: true,
		}, scheme.ParameterCodec)
	ex, err := k.streamExecutor(req)
	if err != nil {
		return "", fmt.Errorf("start the exec agent: %w", err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	stderr := &limitedBuffer{buf: &errb, max: 4 << 10}
	sctx, cancel := context.WithCancel(context.Background())
	a.stopLease = sync.OnceFunc(func() { cancel(); _ = inW.Close() })
	go func() {
		err := ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW, Stderr: stderr})
		if err == nil {
			err = errors.New("exited")
		}
		a.endErr = fmt.Errorf("%w: %w: %s", seam.ErrAgentGone, err, strings.TrimSpace(stderr.String()))
		close(a.ended)
		_ = outW.CloseWithError(a.endErr)
	}()
	go func() {
		if _, err := io.WriteString(inW, hex.EncodeToString(a.token)+"\n"); err != nil {
			return
		}
		t := time.NewTicker(agentKeepalive)
		defer t.Stop()
		for {
			select {
			case <-a.ended:
				return
			case <-t.C:
				if _, err := io.WriteString(inW, "\n"); err != nil {
					return
				}
			}
		}
	}()
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		br := bufio.NewReader(outR)
		s, err := br.ReadString('\n')
		got <- line{s, err}
		_, _ = io.Copy(io.Discard, br) // the agent prints nothing more; keep the stream flowing
	}()
	select {
	case l := <-got:
		port, ok := strings.CutPrefix(strings.TrimSpace(l.s), execagent.ListeningPrefix)
		if _, err := strconv.Atoi(port); l.err == nil && ok && err == nil {
			return port, nil
		}
		a.stopLease()
		<-a.ended
		return "", fmt.Errorf("start the exec agent: it printed %q (%v); %w", l.s, l.err, a.endErr)
	case <-ctx.Done():
		a.stopLease()
		return "", fmt.Errorf("start the exec agent: %w", ctx.Err())
	}
}

// probe runs a no-op command through the agent.
func (a *podAgent) probe(ctx context.Context) error {
	conn, err := a.Dial(ctx)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	r, err := execagent.Run(ctx, conn, execagent.Call{
		Req: execagent.StartRequest{Argv: []string{"/bin/sh", "-c", ":"}}, Stdout: &out, Stderr: &out,
	})
	if err == nil && (r.ExitCode != 0 || r.Error != "") {
		err = fmt.Errorf("a no-op command exited %d (%s%s): %s", r.ExitCode, r.Error, r.StartError, out.String())
	}
	return err
}

// connection returns the port-forward connection, dialling it when there
// is none or it ended.
func (a *podAgent) connection() (httpstream.Connection, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, fmt.Errorf("%w: the sandbox's agent was closed", seam.ErrAgentGone)
	}
	if a.pf != nil {
		select {
		case <-a.pf.CloseChan():
			a.pf = nil
		default:
			return a.pf, nil
		}
	}
	k := a.k
	rt, up, err := spdy.RoundTripperFor(k.rc)
	if err != nil {
		return nil, err
	}
	u := k.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(k.ns).Name(a.pod).SubResource("portforward").URL()
	pf, _, err := spdy.NewDialerForStreaming(up, &http.Client{Transport: rt}, "POST", u).Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return nil, fmt.Errorf("port-forward to pod %s: %w", a.pod, err)
	}
	a.pf = pf
	return pf, nil
}

// Dial opens a port-forward stream to the agent and presents the token.
// The error and data streams of the forward are created at once: the
// kubelet pairs them by request id.
//
// A stream through the API server and the kubelet takes a round trip to
// open and another to authenticate, which a command on Docker's Unix socket
// does not pay. So each Dial opens the next command's stream in the
// background, and the next Dial takes it while it is fresh (spareMaxAge):
// back-to-back commands then cost one round trip each.
func (a *podAgent) Dial(ctx context.Context) (net.Conn, error) {
	a.mu.Lock()
	c := a.spare
	a.spare = nil
	a.mu.Unlock()
	if c != nil && c.ended() {
		// The agent closed it: it has ended, which a stream dialled now
		// tells apart from a command it dropped (Explain).
		_ = c.Close()
		c = nil
	}
	if c != nil {
		a.dialSpare()
		a.k.testDialed(true)
		return c, nil
	}
	conn, err := a.dial(ctx)
	if err == nil {
		a.dialSpare()
		a.k.testDialed(false)
	}
	return conn, err
}

func (k *Backend) testDialed(spare bool) {
	if k.test != nil && k.test.dialed != nil {
		k.test.dialed(spare)
	}
}

// dialSpare opens a spare stream in the background unless one is there or
// on its way; it is closed when no command took it within spareMaxAge.
func (a *podAgent) dialSpare() {
	a.mu.Lock()
	if a.spare != nil || a.dialling || a.closed {
		a.mu.Unlock()
		return
	}
	a.dialling = true
	a.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), spareDialTimeout)
		conn, err := a.dial(ctx)
		cancel()
		a.mu.Lock()
		a.dialling = false
		if err != nil || a.closed || a.spare != nil {
			a.mu.Unlock()
			if conn != nil {
				_ = conn.Close()
			}
			return
		}
		c := conn.(*agentConn)
		c.readAhead()
		a.spare = c
		a.mu.Unlock()
		time.AfterFunc(spareMaxAge, func() {
			a.mu.Lock()
			stale := a.spare == c
			if stale {
				a.spare = nil
			}
			a.mu.Unlock()
			if stale {
				_ = c.Close()
			}
		})
	}()
}

// dial opens a stream to the agent and authenticates it.
func (a *podAgent) dial(ctx context.Context) (net.Conn, error) {
	select {
	case <-a.ended:
		return nil, a.endErr
	default:
	}
	pf, err := a.connection()
	if err != nil {
		return nil, err
	}
	id := strconv.FormatInt(a.nextID.Add(1), 10)
	streams := func(typ string) (httpstream.Stream, error) {
		h := http.Header{}
		h.Set(corev1.StreamType, typ)
		h.Set(corev1.PortHeader, a.port)
		h.Set(corev1.PortForwardRequestIDHeader, id)
		return pf.CreateStream(h)
	}
	type made struct {
		s   httpstream.Stream
		err error
	}
	errc := make(chan made, 1)
	go func() {
		s, err := streams(corev1.StreamTypeError)
		errc <- made{s, err}
	}()
	ds, derr := streams(corev1.StreamTypeData)
	e := <-errc
	if derr != nil || e.err != nil {
		for _, s := range []httpstream.Stream{ds, e.s} {
			if s != nil {
				_ = s.Reset()
				pf.RemoveStreams(s)
			}
		}
		return nil, fmt.Errorf("port-forward stream to pod %s: %w", a.pod, errors.Join(derr, e.err))
	}
	_ = e.s.Close() // the host writes nothing on the error stream
	c := &agentConn{a: a, pf: pf, data: ds, errStream: e.s, failed: make(chan struct{})}
	go c.readErrors()
	wctx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	c.stopWatch = stopWatch
	go a.k.watchLoss(wctx, a.pod, func(l *sandbox.LostError) {
		if a.k.deletedHere(a.pod) && l.Reason == "Deleted" {
			return
		}
		c.mu.Lock()
		c.lost = l
		c.mu.Unlock()
		_ = c.data.Reset()
	})
	if err := execagent.WriteFrame(c, execagent.FrameAuth, a.token); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("port-forward stream to pod %s: %w", a.pod, err)
	}
	return c, nil
}

// Explain tells a lost pod from a broken stream or a command a signal
// ended, as the API server's exec path does (execLossAware).
func (a *podAgent) Explain(ctx context.Context, conn net.Conn, code int, err error) error {
	if c, ok := conn.(*agentConn); ok {
		c.mu.Lock()
		l := c.lost
		c.mu.Unlock()
		if l != nil {
			return a.k.lost(ctx, l)
		}
		if err != nil && c.refused() {
			// The agent did not take the connection: it has ended, or is
			// ending with the pod.
			if lerr := a.k.explainFailure(ctx, a.pod, code, err); lerr != nil {
				return lerr
			}
			return fmt.Errorf("%w: %s", seam.ErrAgentGone, c.errMessage())
		}
	}
	return a.k.explainFailure(ctx, a.pod, code, err)
}

// Close ends the port-forward connection and the agent.
func (a *podAgent) Close() error {
	a.mu.Lock()
	a.closed = true
	pf := a.pf
	a.pf = nil
	spare := a.spare
	a.spare = nil
	a.mu.Unlock()
	if spare != nil {
		_ = spare.Close()
	}
	if pf != nil {
		_ = pf.Close()
	}
	if a.stopLease != nil {
		a.stopLease()
	}
	return nil
}

// agentConn is one port-forward stream to the agent as a net.Conn.
type agentConn struct {
	a         *podAgent
	pf        httpstream.Connection
	data      httpstream.Stream
	errStream httpstream.Stream
	stopWatch func()
	once      sync.Once
	ahead     *readAhead // a spare's first read, until Read takes it

	mu     sync.Mutex
	errMsg string
	lost   *sandbox.LostError
	failed chan struct{} // closed once the error stream reported a failure
}

// readErrors reads what the kubelet reports on the error stream (the
// agent's port refused the connection) and then ends the data stream.
func (c *agentConn) readErrors() {
	msg, _ := io.ReadAll(io.LimitReader(c.errStream, 4<<10))
	if len(msg) == 0 {
		return
	}
	c.mu.Lock()
	c.errMsg = string(msg)
	c.mu.Unlock()
	close(c.failed)
	_ = c.data.Reset()
}

// refused reports whether the kubelet could not connect to the agent's
// port: the agent was not there to take the command. A connection that
// broke later (the agent died while the command ran) is reported in other
// words.
func (c *agentConn) refused() bool {
	select {
	case <-c.failed:
		return strings.Contains(c.errMessage(), "connection refused")
	case <-time.After(100 * time.Millisecond):
		return false
	}
}

func (c *agentConn) errMessage() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errMsg
}

func (c *agentConn) Read(p []byte) (int, error) {
	if r := c.ahead; r != nil && len(p) > 0 {
		<-r.done
		c.ahead = nil
		if r.n > 0 {
			p[0] = r.b[0]
			return 1, nil
		}
		return 0, r.err
	}
	return c.data.Read(p)
}

func (c *agentConn) Write(p []byte) (int, error) { return c.data.Write(p) }

// readAhead is a spare stream's first read, started when the stream is
// opened: the agent sends nothing before it has a command, so a read that
// returns before the stream is taken means that the agent closed it.
type readAhead struct {
	done chan struct{}
	b    [1]byte
	n    int
	err  error
}

// readAhead starts the read ahead of a spare stream; Read returns what it
// got first.
func (c *agentConn) readAhead() {
	r := &readAhead{done: make(chan struct{})}
	c.ahead = r
	go func() {
		r.n, r.err = c.data.Read(r.b[:])
		close(r.done)
	}()
}

// ended reports whether a spare stream's read ahead has returned: the
// agent closed the stream before it was given a command.
func (c *agentConn) ended() bool {
	if c.ahead == nil {
		return false
	}
	select {
	case <-c.ahead.done:
		return true
	default:
		return false
	}
}

// Close resets both streams, which ends the command if it still runs.
func (c *agentConn) Close() error {
	c.once.Do(func() {
		c.stopWatch()
		_ = c.data.Reset()
		_ = c.errStream.Reset()
		c.pf.RemoveStreams(c.data, c.errStream)
	})
	return nil
}

func (c *agentConn) LocalAddr() net.Addr              { return agentAddr("host") }
func (c *agentConn) RemoteAddr() net.Addr             { return agentAddr(c.a.pod + ":" + c.a.port) }
func (c *agentConn) SetDeadline(time.Time) error      { return nil }
func (c *agentConn) SetReadDeadline(time.Time) error  { return nil }
func (c *agentConn) SetWriteDeadline(time.Time) error { return nil }
func (c *agentConn) String() string                   { return "port-forward to " + c.a.pod }
func (agentAddr) Network() string                     { return "port-forward" }
func (a agentAddr) String() string                    { return string(a) }

// agentAddr names an end of an agentConn.
type agentAddr string

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf *bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
