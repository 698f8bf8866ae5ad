package kube_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// echoServer listens on 127.0.0.1:7777 in the pod and echoes what each
// connection sends first.
const echoServer = `nohup python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 7777)); s.listen(64)
while True:
    c, _ = s.accept(); c.sendall(c.recv(100)); c.close()
' >/dev/null 2>&1 &`

// BenchmarkKubeTransports measures the ways the host can reach a running
// sandbox pod (network none, under the default-deny policy), to choose how
// an exec agent in the pod is reached: a round trip to the API server; a
// new exec of true through the API server (what every command costs
// today); and a new stream on one long-lived port-forward connection to a
// server in the pod's loopback, with one echo through it.
//
//	go test ./sandbox/kube -run '^$' -bench KubeTransports -benchtime 20x
func BenchmarkKubeTransports(b *testing.B) {
	c := kubetest.Client(b)
	sb, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image(), Policy: sandbox.AllowAll()})
	require.NoError(b, err)
	rc, err := clientcmd.BuildConfigFromFlags("", kubetest.Kubeconfig(b))
	require.NoError(b, err)
	rc.QPS, rc.Burst = 1000, 1000 // no client-side throttling in the measurement
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(b, err)
	pods := cs.CoreV1().Pods(kubetest.Namespace)

	b.Run("api-get", func(b *testing.B) {
		for b.Loop() {
			_, err := pods.Get(context.Background(), sb.ID(), metav1.GetOptions{})
			require.NoError(b, err)
		}
	})
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(kubetest.Namespace).Name(sb.ID()).SubResource("exec").
				VersionedParams(&corev1.PodExecOptions{Container: "sandbox", Command: []string{"true"}, Stdout: true, Stderr: true}, scheme.ParameterCodec)
			ex, err := remotecommand.NewWebSocketExecutor(rc, "GET", req.URL().String())
			require.NoError(b, err)
			require.NoError(b, ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard}))
		}
	})
	b.Run("port-forward-stream", func(b *testing.B) {
		_, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"sh", "-c", echoServer}})
		require.NoError(b, err)
		rt, up, err := spdy.RoundTripperFor(rc)
		require.NoError(b, err)
		u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(kubetest.Namespace).Name(sb.ID()).SubResource("portforward").URL()
		conn, _, err := spdy.NewDialer(up, &http.Client{Transport: rt}, "POST", u).Dial(portforward.PortForwardProtocolV1Name)
		require.NoError(b, err)
		defer conn.Close()
		id := 0
		echo := func() error {
			id++
			h := http.Header{}
			h.Set(corev1.StreamType, corev1.StreamTypeError)
			h.Set(corev1.PortHeader, "7777")
			h.Set(corev1.PortForwardRequestIDHeader, strconv.Itoa(id))
			es, err := conn.CreateStream(h)
			if err != nil {
				return err
			}
			defer conn.RemoveStreams(es)
			es.Close()
			h.Set(corev1.StreamType, corev1.StreamTypeData)
			ds, err := conn.CreateStream(h)
			if err != nil {
				return err
			}
			defer conn.RemoveStreams(ds)
			defer ds.Close()
			if _, err := ds.Write([]byte("ping\n")); err != nil {
				return err
			}
			got := make([]byte, 5)
			if _, err := io.ReadFull(ds, got); err != nil {
				return err
			}
			if string(got) != "ping\n" {
				b.Fatalf("echo %q", got)
			}
			return nil
		}
		// The server needs a moment to listen.
		res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"python3", "-c", `
import socket, time
for _ in range(300):
    try:
        socket.create_connection(("127.0.0.1", 7777), 1).close(); break
    except OSError:
        time.sleep(0.1)
`}})
		require.NoError(b, err)
		require.Zero(b, res.ExitCode)
		for b.Loop() {
			require.NoError(b, echo())
		}
	})
}
