package pytestparse

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeBenchLog writes a pytest -v -rA log: for each of sessions runs, a
// verbose line per test and the short test summary, over distinct node ids
// (90% pass, 5% fail with a message, 2% skip, 1% each xfail, xpass, error at
// setup). It returns the number of lines written.
func writeBenchLog(w io.Writer, distinct, sessions int) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	lines := 0
	id := func(buf []byte, i int) []byte {
		buf = fmt.Appendf(buf, "tests/unit/pkg_%03d/test_module_%04d.py::TestBehaviour%d::test_case_%07d[param-%d-x]",
			i/10000, i/100, i%7, i, i%13)
		return buf
	}
	outcome := func(i int) (verbose, summary string) {
		switch r := i % 100; {
		case r < 90:
			return "PASSED", "PASSED"
		case r < 95:
			return "FAILED", "FAILED"
		case r < 97:
			return "SKIPPED (requires the network)", ""
		case r < 98:
			return "XFAIL (known bug)", "XFAIL"
		case r < 99:
			return "XPASS (known bug)", "XPASS"
		}
		return "ERROR", "ERROR"
	}
	var buf []byte
	for s := 0; s < sessions; s++ {
		bw.WriteString("============================= test session starts ==============================\n")
		bw.WriteString("platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0 -- /usr/bin/python3\n")
		fmt.Fprintf(bw, "collecting ... collected %d items\n\n", distinct)
		lines += 4
		counts := map[string]int{}
		for i := 0; i < distinct; i++ {
			v, _ := outcome(i)
			buf = id(buf[:0], i)
			buf = append(buf, ' ')
			buf = append(buf, v...)
			for len(buf) < 73 {
				buf = append(buf, ' ')
			}
			buf = fmt.Appendf(buf, " [%3d%%]\n", (i+1)*100/distinct)
			bw.Write(buf)
			lines++
		}
		bw.WriteString("\n=========================== short test summary info ============================\n")
		lines += 2
		for i := 0; i < distinct; i++ {
			v, word := outcome(i)
			switch {
			case word == "":
				fmt.Fprintf(bw, "SKIPPED [1] tests/unit/pkg_%03d/test_module_%04d.py:%d: requires the network\n", i/10000, i/100, 10+i%90)
				counts["skipped"]++
			default:
				buf = append(append(buf[:0], word...), ' ')
				buf = id(buf, i)
				switch word {
				case "FAILED":
					buf = fmt.Appendf(buf, " - AssertionError: assert %d == %d\n", i, i+1)
				case "ERROR":
					buf = append(buf, " - RuntimeError: fixture exploded\n"...)
				case "XFAIL":
					buf = append(buf, " - known bug\n"...)
				case "XPASS":
					buf = append(buf, " known bug\n"...)
				default:
					buf = append(buf, '\n')
				}
				bw.Write(buf)
				counts[map[string]string{"PASSED": "passed", "FAILED": "failed", "ERROR": "errors", "XFAIL": "xfailed", "XPASS": "xpassed"}[word]]++
			}
			_ = v
			lines++
		}
		fmt.Fprintf(bw, "= %d failed, %d passed, %d skipped, %d xfailed, %d xpassed, %d errors in 812.34s (0:13:32) =\n",
			counts["failed"], counts["passed"], counts["skipped"], counts["xfailed"], counts["xpassed"], counts["errors"])
		lines++
	}
	return lines, bw.Flush()
}

type benchFile struct {
	path  string
	size  int64
	lines int
}

func makeBenchLog(b *testing.B, dir string, distinct, sessions int) benchFile {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("bench-%d-%d.log", distinct, sessions))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	lines, err := writeBenchLog(f, distinct, sessions)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return benchFile{path: path, size: st.Size(), lines: lines}
}

// BenchmarkParse parses a generated log of about 200 MB: a million distinct
// node ids, each on a verbose line and a summary line ("distinct=1M"), and
// the same volume over 10,000 ids repeated in 100 sessions
// ("distinct=10k"), which shows memory follows distinct tests, not bytes.
// "python" runs the official harness's parse_log_pytest rules
// (testdata/bench/parse_log_pytest.py) with the host's python3 on the first
// file. Besides MB/s (wall clock) each reports cpu-MB/s, the throughput per
// CPU second used, which a busy machine disturbs less. Run it with:
//
//	go test ./pytestparse -run '^$' -bench Parse -benchtime 3x
func BenchmarkParse(b *testing.B) {
	dir := b.TempDir()
	files := map[string]benchFile{
		"distinct=1M":  makeBenchLog(b, dir, 1_000_000, 1),
		"distinct=10k": makeBenchLog(b, dir, 10_000, 100),
	}
	mb := func(n int64) float64 { return float64(n) / (1 << 20) }
	for _, name := range []string{"distinct=1M", "distinct=10k"} {
		bf := files[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(bf.size)
			var before, after runtime.MemStats
			var retained uint64
			runtime.GC()
			runtime.ReadMemStats(&before)
			cpu := processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f, err := os.Open(bf.path)
				if err != nil {
					b.Fatal(err)
				}
				r, err := Parse(f)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if i < b.N-1 {
					continue
				}
				b.StopTimer()
				cpu = processCPU() - cpu
				runtime.ReadMemStats(&after)
				runtime.GC()
				var live runtime.MemStats
				runtime.ReadMemStats(&live)
				retained = live.HeapAlloc - before.HeapAlloc
				if !r.Summary.Seen || len(r.Tests) == 0 || r.Summary.Total() != len(r.Tests) {
					b.Fatalf("benchmark log misparsed: %d tests, closing line %+v", len(r.Tests), r.Summary)
				}
				runtime.KeepAlive(r)
			}
			if cpu > 0 {
				b.ReportMetric(mb(bf.size)*float64(b.N)/cpu.Seconds(), "cpu-MB/s")
			}
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N)/float64(bf.lines), "allocs/line")
			b.ReportMetric(mb(int64(retained)), "report-MB")
		})
	}
	b.Run("python", func(b *testing.B) {
		py, err := exec.LookPath("python3")
		if err != nil {
			b.Skip("no python3 on PATH")
		}
		bf := files["distinct=1M"]
		b.SetBytes(bf.size)
		var cpu, inScript time.Duration
		for i := 0; i < b.N; i++ {
			cmd := exec.Command(py, filepath.Join("testdata", "bench", "parse_log_pytest.py"), bf.path)
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			var res struct {
				Seconds float64 `json:"seconds"`
				Tests   int     `json:"tests"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				b.Fatal(err)
			}
			inScript += time.Duration(res.Seconds * float64(time.Second))
		}
		b.ReportMetric(mb(bf.size)*float64(b.N)/cpu.Seconds(), "cpu-MB/s")
		b.ReportMetric(mb(bf.size)*float64(b.N)/inScript.Seconds(), "script-MB/s")
	})
}

var (
	benchLog      = flag.String("benchlog", "", "TestWriteBenchLog writes the benchmark log here; TestParseBenchLog parses it")
	benchDistinct = flag.Int("benchlog.distinct", 1_000_000, "distinct node ids in the log TestWriteBenchLog writes (the same size is kept by repeating sessions)")
)

// TestWriteBenchLog writes the benchmark log to a file, to time other
// parsers on it or measure peak memory:
//
//	go test ./pytestparse -run TestWriteBenchLog -benchlog /tmp/pytest-1M.log
//
// Without -benchlog it writes a small log (1,000 ids) to a temporary file.
func TestWriteBenchLog(t *testing.T) {
	path, distinct := benchLogFile(t)
	require.Positive(t, distinct)
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = writeBenchLog(f, distinct, max(1, 1_000_000/distinct))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, fi.Size())
}

// benchLogFile is where the benchmark log goes, and how many distinct ids
// it holds: -benchlog and -benchlog.distinct, or a small temporary log.
func benchLogFile(t *testing.T) (string, int) {
	if *benchLog != "" {
		return *benchLog, *benchDistinct
	}
	return filepath.Join(t.TempDir(), "bench.log"), 1000
}

// TestParseBenchLog parses the file given by -benchlog once, so that a tool
// like /usr/bin/time -v sees the peak memory of one parse.
//
// Without -benchlog it parses a small log (1,000 ids) written for it.
func TestParseBenchLog(t *testing.T) {
	path := *benchLog
	if path == "" {
		var distinct int
		path, distinct = benchLogFile(t)
		w, err := os.Create(path)
		require.NoError(t, err)
		_, err = writeBenchLog(w, distinct, 1)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	start, cpu := time.Now(), processCPU()
	r, err := Parse(f)
	require.NoError(t, err)
	wall, cpu := time.Since(start), processCPU()-cpu
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d tests, %d lines, %.2fs wall, %.2fs CPU, %.0f MB heap in use after parsing",
		len(r.Tests), r.Lines, wall.Seconds(), cpu.Seconds(), float64(ms.HeapInuse)/(1<<20))
	require.True(t, r.Summary.Seen)
	assert.Positive(t, len(r.Tests))
}
