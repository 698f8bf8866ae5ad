package hub_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/dataset/hub"
	"github.com/swebox/swebox/swebench/dataset/hub/hubtest"
)

const name = "SWE-bench/SWE-bench_Lite"

// rowsParquet is a Parquet file written by Apache Arrow's writer
// (../testdata/parquetgen) holding SWE-bench shaped rows.
func rowsParquet(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "parquet", "rows.parquet"))
	require.NoError(t, err)
	return b
}

func newClient(t *testing.T, srv *hubtest.Server, cacheDir string, opts ...hub.Option) *hub.Client {
	t.Helper()
	c, err := hub.New(append([]hub.Option{hub.WithEndpoint(srv.URL), hub.WithCacheDir(cacheDir), hub.WithToken("")}, opts...)...)
	require.NoError(t, err)
	return c
}

func statuses(reqs []hubtest.Request) []int {
	out := make([]int, len(reqs))
	for i, r := range reqs {
		out[i] = r.Status
	}
	return out
}

func ids(rows []dataset.Instance) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.InstanceID
	}
	return out
}

// The rows by name are the rows of the JSONL twin of the Parquet file, in
// order, from two files; a second load revalidates with the ETags and
// downloads nothing.
func TestLoadThenRevalidate(t *testing.T) {
	srv := hubtest.NewServer(t)
	data := rowsParquet(t)
	second, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "eval", "testdata", "hub", "demo", "test", "0000.parquet"))
	require.NoError(t, err)
	srv.SetSplit(name, "test", data, second)
	want, err := dataset.LoadDataset(filepath.Join("..", "testdata", "parquet", "rows.jsonl"))
	require.NoError(t, err)

	c := newClient(t, srv, t.TempDir())
	res, err := c.Load(context.Background(), hub.Request{Name: "lite"})
	require.NoError(t, err)
	assert.Equal(t, name, res.Dataset, "the alias names the official dataset")
	assert.Equal(t, "test", res.Split)
	assert.Nil(t, res.Offline)
	require.Len(t, res.Files, 2)
	require.Len(t, res.Instances, len(want)+4)
	for i, w := range want {
		g := res.Instances[i]
		assert.Equal(t, res.Files[0].URL, g.Source.File, "a row names its file's URL")
		assert.Equal(t, i+1, g.Source.Line)
		assert.Equal(t, w.FailToPass, g.FailToPass)
		assert.Equal(t, w.Version, g.Version)
		assert.Equal(t, w.Patch, g.Patch)
	}
	assert.Equal(t, []int{200, 200, 200}, statuses(srv.Requests()))
	for _, f := range res.Files {
		assert.True(t, f.Downloaded)
		assert.NotEmpty(t, f.ETag)
	}

	again, err := c.Load(context.Background(), hub.Request{Name: name, Split: "test"})
	require.NoError(t, err)
	reqs := srv.Requests()
	assert.Equal(t, []int{304, 304, 304}, statuses(reqs), "every request is conditional and nothing is sent again")
	for _, r := range reqs {
		assert.NotEmpty(t, r.IfNoneMatch, r.Path)
	}
	assert.Equal(t, ids(res.Instances), ids(again.Instances))
	assert.Nil(t, again.Offline)
	for _, f := range again.Files {
		assert.False(t, f.Downloaded)
	}

	// A changed file has a new ETag: it is downloaded again.
	srv.SetSplit(name, "test", second)
	changed, err := c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	assert.Equal(t, []int{200, 200}, statuses(srv.Requests()))
	assert.Equal(t, ids(res.Instances[len(want):]), ids(changed.Instances))
}

// With no server at all, a second run reads the cache and says so.
func TestOfflineUsesCache(t *testing.T) {
	srv := hubtest.NewServer(t)
	srv.SetSplit(name, "test", rowsParquet(t))
	cacheDir := t.TempDir()
	first, err := newClient(t, srv, cacheDir).Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	c := newClient(t, srv, cacheDir)
	srv.Close()

	res, err := c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	require.Error(t, res.Offline, "the result says the Hub was not asked")
	assert.ErrorIs(t, res.Offline, hub.ErrUnreachable)
	assert.Equal(t, ids(first.Instances), ids(res.Instances))
	assert.False(t, res.Files[0].Downloaded)
	assert.Equal(t, first.Files[0].Fetched, res.Files[0].Fetched)

	// Another split was never cached: a clear error naming dataset and URL.
	_, err = c.Load(context.Background(), hub.Request{Name: name, Split: "dev"})
	require.ErrorIs(t, err, hub.ErrUnreachable)
	var he *hub.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, name, he.Dataset)
	assert.Equal(t, srv.URL+"/api/datasets/"+name+"/parquet/default/dev", he.URL)
	assert.Contains(t, err.Error(), "dataset "+name+" (split dev): "+srv.URL+"/api/datasets/")
}

// An outage (HTTP 5xx) is like no network: the cached copy stands in.
func TestServerErrorUsesCache(t *testing.T) {
	srv := hubtest.NewServer(t)
	srv.SetSplit(name, "test", rowsParquet(t))
	c := newClient(t, srv, t.TempDir())
	srv.FailWith(http.StatusServiceUnavailable)
	_, err := c.Load(context.Background(), hub.Request{Name: name})
	require.ErrorIs(t, err, hub.ErrUnreachable, "nothing cached yet")
	var he *hub.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusServiceUnavailable, he.Status)

	srv.FailWith(0)
	_, err = c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	srv.FailWith(http.StatusBadGateway)
	res, err := c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	require.ErrorIs(t, res.Offline, hub.ErrUnreachable)
	assert.Len(t, res.Instances, 3)
}

// A cancelled load stops rather than falling back to the cache.
func TestCancelledLoadDoesNotUseCache(t *testing.T) {
	srv := hubtest.NewServer(t)
	srv.SetSplit(name, "test", rowsParquet(t))
	c := newClient(t, srv, t.TempDir())
	_, err := c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Load(ctx, hub.Request{Name: name})
	require.ErrorIs(t, err, context.Canceled)
}

func TestNotFound(t *testing.T) {
	srv := hubtest.NewServer(t)
	srv.SetSplit(name, "test", rowsParquet(t))
	srv.SetSplit(name, "dev", rowsParquet(t))
	c := newClient(t, srv, t.TempDir())
	type testCase struct {
		name, dataset, split string
		msg                  string
	}
	for _, tc := range []testCase{
		{"unknown dataset", "nobody/nothing", "test", "dataset nobody/nothing (split test): " + srv.URL + "/api/datasets/nobody/nothing/parquet/default/test: HTTP 404: no such dataset on the Hub, or it is private or gated (set HF_TOKEN)"},
		{"unknown split", name, "train", "dataset " + name + " (split train): " + srv.URL + "/api/datasets/" + name + "/parquet/default/train: HTTP 404: no split \"train\" in config \"default\" (splits: dev, test)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Load(context.Background(), hub.Request{Name: tc.dataset, Split: tc.split})
			require.ErrorIs(t, err, hub.ErrNotFound)
			assert.NotErrorIs(t, err, hub.ErrUnreachable)
			var he *hub.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, http.StatusNotFound, he.Status)
			assert.Equal(t, tc.msg, err.Error())
		})
	}
}

func TestBadNames(t *testing.T) {
	c, err := hub.New(hub.WithCacheDir(t.TempDir()), hub.WithEndpoint("http://127.0.0.1:1"))
	require.NoError(t, err)
	for _, req := range []hub.Request{
		{Name: "no-slash"}, {Name: "a/b/c"}, {Name: "../x"},
		{Name: name, Split: "../../etc"}, {Name: name, Config: "a/b"},
	} {
		_, err := c.Load(context.Background(), req)
		assert.ErrorIs(t, err, hub.ErrBadName, "%+v", req)
	}
}

// A file that is not Parquet: an error naming the dataset and the file's
// URL; the bad copy is not trusted next time.
func TestCorruptFile(t *testing.T) {
	srv := hubtest.NewServer(t)
	good := rowsParquet(t)
	type testCase struct {
		name string
		data []byte
	}
	for _, tc := range []testCase{
		{"html instead of parquet", []byte("<html>rate limited</html>")},
		{"truncated", good[:len(good)/2]},
		{"damaged footer", append(append([]byte{}, good[:len(good)-12]...), []byte("garbagePAR1")...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.SetSplit(name, "test", tc.data)
			c := newClient(t, srv, t.TempDir())
			_, err := c.Load(context.Background(), hub.Request{Name: name})
			require.ErrorIs(t, err, dataset.ErrBadParquet)
			var he *hub.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, name, he.Dataset)
			assert.Equal(t, srv.URL+"/files/"+name+"/default/test/0000.parquet", he.URL)
			assert.Contains(t, err.Error(), "dataset "+name+" (split test): "+he.URL)
			srv.Requests()

			srv.SetSplit(name, "test", good)
			res, err := c.Load(context.Background(), hub.Request{Name: name})
			require.NoError(t, err)
			assert.Len(t, res.Instances, 3)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			assert.Empty(t, reqs[1].IfNoneMatch, "the corrupt copy was dropped from the cache")
		})
	}
}

// HF_TOKEN is sent as a bearer token; without it a private dataset reads
// as missing, with a wrong one access is denied. HF_ENDPOINT is honoured.
func TestTokenAndEndpointFromEnvironment(t *testing.T) {
	srv := hubtest.NewServer(t)
	srv.SetSplit(name, "test", rowsParquet(t))
	srv.RequireToken("hf_secret")
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("SWEBOX_CACHE", t.TempDir())

	t.Setenv("HF_TOKEN", "hf_secret")
	c, err := hub.New()
	require.NoError(t, err)
	res, err := c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	assert.Len(t, res.Instances, 3)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, "Bearer hf_secret", r.Authorization, r.Path)
	}
	assert.FileExists(t, res.Files[0].Path)
	assert.True(t, strings.HasPrefix(res.Files[0].Path, filepath.Join(os.Getenv("SWEBOX_CACHE"), "hub")), "the cache is under SWEBOX_CACHE")

	t.Setenv("HF_TOKEN", "")
	c, err = hub.New()
	require.NoError(t, err)
	_, err = c.Load(context.Background(), hub.Request{Name: name})
	require.ErrorIs(t, err, hub.ErrNotFound)
	assert.Contains(t, err.Error(), "set HF_TOKEN")

	srv.Requests()
	t.Setenv("HF_TOKEN", "hf_wrong")
	c, err = hub.New()
	require.NoError(t, err)
	_, err = c.Load(context.Background(), hub.Request{Name: name})
	require.ErrorIs(t, err, hub.ErrAccess)
	assert.Equal(t, "Bearer hf_wrong", srv.Requests()[0].Authorization)
}

// The token goes to the endpoint's host only, not to other hosts a file
// list names.
func TestTokenStaysOnEndpointHost(t *testing.T) {
	files := hubtest.NewServer(t)
	files.SetSplit(name, "test", rowsParquet(t))
	var mu sync.Mutex
	var auth []string
	api := http.NewServeMux()
	api.HandleFunc("/api/datasets/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`["` + files.URL + `/files/` + name + `/default/test/0000.parquet"]`))
	})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c, err := hub.New(hub.WithEndpoint(srv.URL), hub.WithCacheDir(t.TempDir()), hub.WithToken("hf_secret"))
	require.NoError(t, err)
	_, err = c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	assert.Equal(t, []string{"Bearer hf_secret"}, auth)
	reqs := files.Requests()
	require.Len(t, reqs, 1)
	assert.Empty(t, reqs[0].Authorization)
}

func TestProgress(t *testing.T) {
	srv := hubtest.NewServer(t)
	data := rowsParquet(t)
	srv.SetSplit(name, "test", data)
	var seen []hub.Progress
	c := newClient(t, srv, t.TempDir(), hub.WithProgress(func(p hub.Progress) { seen = append(seen, p) }))
	_, err := c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	require.NotEmpty(t, seen)
	assert.Equal(t, int64(0), seen[0].Done)
	last := seen[len(seen)-1]
	assert.Equal(t, int64(len(data)), last.Done)
	assert.Equal(t, int64(len(data)), last.Total)
	assert.Equal(t, 1, last.File)
	assert.Equal(t, 1, last.Files)
	for i := 1; i < len(seen); i++ {
		assert.GreaterOrEqual(t, seen[i].Done, seen[i-1].Done)
	}
}

// Runs that share a cold cache all succeed with the same rows and leave no
// temporary files.
func TestConcurrentLoadsShareTheCache(t *testing.T) {
	srv := hubtest.NewServer(t)
	srv.SetSplit(name, "test", rowsParquet(t))
	cacheDir := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	got := make([][]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := hub.New(hub.WithEndpoint(srv.URL), hub.WithCacheDir(cacheDir))
			if err != nil {
				errs[i] = err
				return
			}
			res, err := c.Load(context.Background(), hub.Request{Name: name})
			errs[i] = err
			got[i] = ids(res.Instances)
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, got[0], got[i])
	}
	assert.Len(t, got[0], 3)
	err := filepath.Walk(cacheDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), ".") {
			return errors.New("temporary file left: " + p)
		}
		return err
	})
	assert.NoError(t, err)
}

func TestResolveAliases(t *testing.T) {
	for alias, want := range map[string]string{
		"full": "SWE-bench/SWE-bench", "swe-bench": "SWE-bench/SWE-bench", "swebench": "SWE-bench/SWE-bench", "swe_bench": "SWE-bench/SWE-bench",
		"lite": "SWE-bench/SWE-bench_Lite", "swe-bench-lite": "SWE-bench/SWE-bench_Lite", "swebench-lite": "SWE-bench/SWE-bench_Lite",
		"swe_bench_lite": "SWE-bench/SWE-bench_Lite", "swe-bench_lite": "SWE-bench/SWE-bench_Lite", "SWE-Bench-Lite": "SWE-bench/SWE-bench_Lite",
		"verified": "SWE-bench/SWE-bench_Verified", " Verified ": "SWE-bench/SWE-bench_Verified",
		"multilingual": "SWE-bench/SWE-bench_Multilingual", "multimodal": "SWE-bench/SWE-bench_Multimodal",
		"princeton-nlp/SWE-bench_Lite": "princeton-nlp/SWE-bench_Lite",
	} {
		assert.Equal(t, want, hub.Resolve(alias), alias)
	}
}

// A file larger than the client allows is refused, and nothing of it stays
// in the cache.
func TestFileTooLarge(t *testing.T) {
	srv := hubtest.NewServer(t)
	good := rowsParquet(t)
	srv.SetSplit(name, "test", good)
	dir := t.TempDir()
	c := newClient(t, srv, dir, hub.WithMaxFileSize(int64(len(good)-1)))
	_, err := c.Load(context.Background(), hub.Request{Name: name})
	require.ErrorIs(t, err, hub.ErrTooLarge)
	assert.Contains(t, err.Error(), "more than the "+strconv.Itoa(len(good)-1)+" ")
	blobs, _ := os.ReadDir(filepath.Join(dir, "blobs"))
	assert.Empty(t, blobs, "nothing of the file is kept")

	c = newClient(t, srv, dir, hub.WithMaxFileSize(int64(len(good))))
	res, err := c.Load(context.Background(), hub.Request{Name: name})
	require.NoError(t, err)
	assert.Len(t, res.Instances, 3)

	_, err = hub.New(hub.WithMaxFileSize(0))
	assert.Error(t, err)
}
