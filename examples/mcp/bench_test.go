package main

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/internal/testenv"
)

// BenchmarkRunPythonPrint1 runs print(1) in a fresh sandbox three ways, in
// turn within each iteration so that the machine's load falls on all three
// alike: through the library (agent.Manager.RunPython), and through the
// built server's run_python tool over stdio and over streamable HTTP. The
// difference is what MCP adds to a call. It reports each way's p50 and p95.
func BenchmarkRunPythonPrint1(b *testing.B) {
	c := testenv.Client(b)
	m, err := agent.New(c, agent.WithImage(testenv.Image()), agent.WithStateDir(b.TempDir()))
	require.NoError(b, err)
	defer m.Close()
	// Without a pool, as the library's manager: the difference is MCP's
	// alone (BenchmarkRunPythonPool measures the pool).
	stdio := startStdio(b, baseArgs(c, "--pool", "0"), nil).cs
	httpCS, err := connectHTTP(b, startHTTP(b, baseArgs(c, "--token", testToken, "--pool", "0")), testToken, nil)
	require.NoError(b, err)

	viaMCP := func(cs *mcp.ClientSession) func() {
		return func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "print(1)"}})
			require.NoError(b, err)
			require.False(b, res.IsError, text(res))
			require.Equal(b, "1\n", res.StructuredContent.(map[string]any)["stdout"])
		}
	}
	ways := []struct {
		name string
		run  func()
	}{
		{"library", func() {
			res, err := m.RunPython(context.Background(), "print(1)", agent.RunOptions{})
			require.NoError(b, err)
			require.Equal(b, "1\n", res.Stdout.String())
		}},
		{"stdio", viaMCP(stdio)},
		{"http", viaMCP(httpCS)},
	}
	d := make([][]time.Duration, len(ways))
	for b.Loop() {
		for i, w := range ways {
			start := time.Now()
			w.run()
			d[i] = append(d[i], time.Since(start))
		}
	}
	for i, w := range ways {
		p50, p95 := percentiles(d[i])
		b.ReportMetric(p50, w.name+"-p50-ms")
		b.ReportMetric(p95, w.name+"-p95-ms")
	}
}

// BenchmarkRunPythonPool runs print(1) through run_python over stdio on a
// server without a pool (--pool 0) and one with (--pool 2), in turn within
// each iteration so that the machine's load falls on both alike. It reports
// each one's p50 and p95.
func BenchmarkRunPythonPool(b *testing.B) {
	c := testenv.Client(b)
	call := func(cs *mcp.ClientSession) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "print(1)"}})
		require.NoError(b, err)
		require.False(b, res.IsError, text(res))
		require.Equal(b, "1\n", res.StructuredContent.(map[string]any)["stdout"])
	}
	ways := []struct {
		name string
		cs   *mcp.ClientSession
	}{
		{"unpooled", startStdio(b, baseArgs(c, "--pool", "0"), nil).cs},
		{"pooled", startStdio(b, baseArgs(c, "--pool", "2"), nil).cs},
	}
	// Asked for twice, run_python's sandboxes are kept ready.
	for range 2 {
		call(ways[1].cs)
	}
	d := make([][]time.Duration, len(ways))
	for b.Loop() {
		for i, w := range ways {
			start := time.Now()
			call(w.cs)
			d[i] = append(d[i], time.Since(start))
		}
	}
	for i, w := range ways {
		p50, p95 := percentiles(d[i])
		b.ReportMetric(p50, w.name+"-p50-ms")
		b.ReportMetric(p95, w.name+"-p95-ms")
	}
}

func percentiles(d []time.Duration) (p50, p95 float64) {
	if len(d) == 0 {
		return 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000 }
	return at(0.50), at(0.95)
}

// BenchmarkProtocolRoundTrip is the MCP cost alone: session_list, which
// runs no sandbox, over stdio and over HTTP.
func BenchmarkProtocolRoundTrip(b *testing.B) {
	c := testenv.Client(b)
	call := func(b *testing.B, cs *mcp.ClientSession) {
		for b.Loop() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "session_list", Arguments: map[string]any{}})
			require.NoError(b, err)
			require.False(b, res.IsError, text(res))
		}
	}
	b.Run("stdio", func(b *testing.B) {
		call(b, startStdio(b, baseArgs(c), nil).cs)
	})
	b.Run("http", func(b *testing.B) {
		cs, err := connectHTTP(b, startHTTP(b, baseArgs(c, "--token", testToken)), testToken, nil)
		require.NoError(b, err)
		call(b, cs)
	})
}
