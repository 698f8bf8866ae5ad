package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/swebox/swebox/swebench/dataset"
	_ "github.com/swebox/swebox/swebench/dataset/parquet" // dataset.ReadParquet and LoadDataset read .parquet files
)

// DefaultEndpoint is the public Hugging Face Hub.
const DefaultEndpoint = "https://huggingface.co"

// DefaultConfig is the config (subset) of every official SWE-bench dataset.
const DefaultConfig = "default"

// Client loads dataset splits from the Hub's Parquet export, through a
// local cache. It is safe for concurrent use.
type Client struct {
	endpoint string
	token    string
	cache    cache
	http     *http.Client
	progress func(Progress)
	logger   *slog.Logger
	maxFile  int64
}

// DefaultMaxFileSize bounds one downloaded Parquet file: the largest
// SWE-bench split's file is tens of MB.
const DefaultMaxFileSize = 1 << 30

// WithMaxFileSize sets the most bytes one Parquet file may hold; a larger
// download is refused (ErrTooLarge) and nothing of it is kept. Default:
// DefaultMaxFileSize.
func WithMaxFileSize(n int64) Option {
	return func(c *Client) error {
		if n <= 0 {
			return fmt.Errorf("hub max file size %d: want a positive size", n)
		}
		c.maxFile = n
		return nil
	}
}

// Option configures a Client.
type Option func(*Client) error

// WithEndpoint sets the Hub's base URL, as HF_ENDPOINT does for Hugging
// Face's own tools. Default: $HF_ENDPOINT, else DefaultEndpoint.
func WithEndpoint(endpoint string) Option {
	return func(c *Client) error {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("hub endpoint %q: want an http or https URL", endpoint)
		}
		c.endpoint = strings.TrimRight(endpoint, "/")
		return nil
	}
}

// WithToken sets the access token sent as "Authorization: Bearer" to the
// endpoint's host (never to other hosts a file list names). Default:
// $HF_TOKEN; none when empty.
func WithToken(token string) Option {
	return func(c *Client) error { c.token = token; return nil }
}

// WithCacheDir sets the cache directory. Default: $SWEBOX_CACHE/hub, else
// the user cache directory's swebox/hub (~/.cache/swebox/hub on Linux).
func WithCacheDir(dir string) Option {
	return func(c *Client) error {
		if dir == "" {
			return errors.New("hub cache directory: empty")
		}
		c.cache = cache{dir: dir}
		return nil
	}
}

// WithHTTPClient sets the HTTP client. Default: one whose transport gives
// up on a server that sends no response headers within a minute; the
// context bounds the whole load.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error { c.http = hc; return nil }
}

// WithProgress sets a function called as file downloads advance (from the
// goroutine that called Load). Default: none.
func WithProgress(fn func(Progress)) Option {
	return func(c *Client) error { c.progress = fn; return nil }
}

// WithLogger sets where requests and cache decisions are logged. Default:
// discarded.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) error { c.logger = l; return nil }
}

// DefaultCacheDir is the cache directory used without WithCacheDir.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("SWEBOX_CACHE"); d != "" {
		return filepath.Join(d, "hub"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("hub cache directory: %w (set SWEBOX_CACHE)", err)
	}
	return filepath.Join(d, "swebox", "hub"), nil
}

// New returns a Client: defaults from the environment, then the options.
func New(opts ...Option) (*Client, error) {
	c := &Client{endpoint: DefaultEndpoint, token: os.Getenv("HF_TOKEN"), maxFile: DefaultMaxFileSize}
	if e := os.Getenv("HF_ENDPOINT"); e != "" {
		if err := WithEndpoint(e)(c); err != nil {
			return nil, fmt.Errorf("HF_ENDPOINT: %w", err)
		}
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.cache.dir == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		c.cache.dir = dir
	}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = time.Minute
		c.http = &http.Client{Transport: t}
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Request names a split: Name is "owner/name" or an official alias
// (dataset.HubAlias); Split defaults to "test", Config to DefaultConfig.
type Request struct {
	Name   string
	Split  string
	Config string
}

// Result is a loaded split.
type Result struct {
	Dataset   string // "owner/name" after alias expansion
	Config    string
	Split     string
	Instances []dataset.Instance
	Files     []File
	// Offline is why the Hub could not be asked (a network error, HTTP 5xx)
	// when the rows come from the cache without revalidation; nil when the
	// Hub confirmed or sent every file.
	Offline error
}

// File is one Parquet file of a split.
type File struct {
	URL        string
	Path       string // the cached copy
	ETag       string
	Size       int64
	Downloaded bool      // fetched by this call (false: the cached copy was current or the Hub unreachable)
	Fetched    time.Time // when the cached copy was downloaded
}

// Progress reports a file download: Done of Total bytes (Total is -1 when
// the server did not say) of file number File (1-based) of Files.
type Progress struct {
	Dataset     string
	URL         string
	File, Files int
	Done, Total int64
}

var (
	hubName  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	partName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// Resolve expands an official alias ("lite", "verified", ...) to the Hub
// name it stands for and returns other names unchanged.
func Resolve(name string) string {
	if full, ok := dataset.HubAlias(name); ok {
		return full
	}
	return name
}

// Load returns the rows of one split: the file list from
// {endpoint}/api/datasets/{name}/parquet/{config}/{split}, then each
// Parquet file, each request conditional on the cached copy's ETag. When
// the Hub cannot be reached and every file is cached, the cached rows are
// returned with Result.Offline set. Rows decode as dataset.LoadDataset
// decodes a JSONL file; each row's Source names its file's URL and row.
func (c *Client) Load(ctx context.Context, req Request) (Result, error) {
	res := Result{Dataset: Resolve(strings.TrimSpace(req.Name)), Config: req.Config, Split: req.Split}
	if res.Config == "" {
		res.Config = DefaultConfig
	}
	if res.Split == "" {
		res.Split = "test"
	}
	fail := func(u string, status int, err error) (Result, error) {
		return Result{}, &Error{Dataset: res.Dataset, Split: res.Split, URL: u, Status: status, Err: err}
	}
	switch {
	case !hubName.MatchString(res.Dataset):
		return fail("", 0, kindf(ErrBadName, "want owner/name or one of the aliases"))
	case !partName.MatchString(res.Config) || strings.Contains(res.Config, ".."):
		return fail("", 0, kindf(ErrBadName, "bad config name %q", res.Config))
	case !partName.MatchString(res.Split) || strings.Contains(res.Split, ".."):
		return fail("", 0, kindf(ErrBadName, "bad split name %q", res.Split))
	}

	listURL := c.endpoint + "/api/datasets/" + res.Dataset + "/parquet/" + res.Config + "/" + res.Split
	urls, status, err := c.fileList(ctx, &res, listURL)
	if err != nil {
		return fail(listURL, status, err)
	}
	for i, u := range urls {
		f, status, err := c.fetchFile(ctx, &res, u, i+1, len(urls))
		if err != nil {
			return fail(u, status, err)
		}
		res.Files = append(res.Files, f)
	}
	for _, f := range res.Files {
		rows, err := readFile(f)
		if err != nil {
			if errors.Is(err, dataset.ErrBadParquet) {
				c.cache.dropFile(f.URL) // download it again next time
			}
			return fail(f.URL, 0, err)
		}
		res.Instances = append(res.Instances, rows...)
	}
	if err := dataset.CheckUniqueIDs(res.Instances); err != nil {
		return fail(listURL, 0, err)
	}
	return res, nil
}

func readFile(f File) ([]dataset.Instance, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("read cached copy: %w", err)
	}
	defer fh.Close()
	return dataset.ReadParquet(fh, f.Size, f.URL)
}

// get sends a GET, with the token when u is on the endpoint's host and with
// If-None-Match when etag is set. A transport error matches ErrUnreachable.
func (c *Client) get(ctx context.Context, u, etag string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, kindf(ErrBadResponse, "bad URL: %v", err)
	}
	req.Header.Set("User-Agent", "swebox")
	if c.token != "" && sameHost(u, c.endpoint) {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the *Error already
		}
		return nil, &unreachable{err}
	}
	c.logger.Debug("hub request", "url", u, "status", resp.StatusCode, "if_none_match", etag)
	return resp, nil
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Host, ub.Host)
}

// offline reports whether err means the Hub could not answer (so a cached
// copy may stand in).
func offline(err error, status int) bool {
	return errors.Is(err, ErrUnreachable) && ctxAlive(err) || status >= 500
}

// ctxAlive is false for cancellations: a cancelled run stops rather than
// falling back to the cache.
func ctxAlive(err error) bool {
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// statusError describes an unsuccessful HTTP answer.
func (c *Client) statusError(resp *http.Response, what string) error {
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return kindf(ErrNotFound, "no such %s on the Hub", what)
	case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && c.token == "":
		return kindf(ErrNotFound, "no such %s, or it is private or gated (set HF_TOKEN)", what)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return kindf(ErrAccess, "the Hub refused HF_TOKEN for this %s (gated: accept its terms on the Hub)", what)
	case resp.StatusCode >= 500:
		return kindf(ErrUnreachable, "the Hub failed: %s", resp.Status)
	}
	return kindf(ErrBadResponse, "unexpected HTTP status %s", resp.Status)
}

// fileList returns the Parquet URLs of the split, from the Hub or, when it
// cannot answer, from the cache.
func (c *Client) fileList(ctx context.Context, res *Result, listURL string) ([]string, int, error) {
	var fromCache func() []string
	etag := ""
	if cached, ok := c.cache.list(res.Dataset, res.Config, res.Split); ok {
		fromCache = func() []string { return c.resolveURLs(cached.Files) }
		etag = cached.ETag
	}
	fresh := func(resp *http.Response) ([]string, error) {
		var urls []string
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return nil, &unreachable{err}
		}
		if err := json.Unmarshal(body, &urls); err != nil || len(urls) == 0 {
			return nil, kindf(ErrBadResponse, "want a JSON list of Parquet file URLs, got %.80q", body)
		}
		e := listEntry{URL: listURL, ETag: resp.Header.Get("ETag"), Files: urls, Fetched: time.Now().UTC()}
		if err := c.cache.putList(res.Dataset, res.Config, res.Split, e); err != nil {
			c.logger.Warn("hub cache write failed", "err", err)
		}
		return c.resolveURLs(urls), nil
	}
	notFound := func() error { return c.splitNotFound(ctx, res) }
	return getCached(ctx, c, res, listURL, "dataset", etag, fromCache, fresh, notFound)
}

// getCached is the Hub's ETag download of u against a cached copy:
// fromCache (nil when nothing is cached, etag its ETag) answers a 304,
// fresh reads a 200, notFound (when not nil) explains a 404 and another
// status is the Hub's error about what. When the Hub cannot answer and a
// copy is cached, the copy stands in and res.Offline says why. The int is
// the HTTP status, 0 when there was none.
func getCached[T any](ctx context.Context, c *Client, res *Result, u, what, etag string,
	fromCache func() T, fresh func(*http.Response) (T, error), notFound func() error) (T, int, error) {
	resp, err := c.get(ctx, u, etag)
	status := 0
	if err == nil {
		defer resp.Body.Close()
		status = resp.StatusCode
	}
	switch {
	case err == nil && status == http.StatusNotModified && fromCache != nil:
		return fromCache(), status, nil
	case err == nil && status == http.StatusOK:
		v, ferr := fresh(resp)
		if ferr == nil {
			return v, status, nil
		}
		err = ferr
	case err == nil && status == http.StatusNotFound && notFound != nil:
		err = notFound()
	case err == nil:
		err = c.statusError(resp, what)
	}
	if offline(err, status) && fromCache != nil {
		res.Offline = err
		return fromCache(), status, nil
	}
	var zero T
	return zero, status, err
}

// splitNotFound tells a missing dataset from a missing split: the config's
// listing names its splits.
func (c *Client) splitNotFound(ctx context.Context, res *Result) error {
	u := c.endpoint + "/api/datasets/" + res.Dataset + "/parquet/" + res.Config
	resp, err := c.get(ctx, u, "")
	if err != nil {
		return kindf(ErrNotFound, "no such dataset or split on the Hub")
	}
	defer resp.Body.Close()
	var splits map[string]json.RawMessage
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &splits) != nil || len(splits) == 0 {
		if c.token == "" {
			return kindf(ErrNotFound, "no such dataset on the Hub, or it is private or gated (set HF_TOKEN)")
		}
		return kindf(ErrNotFound, "no such dataset on the Hub")
	}
	names := make([]string, 0, len(splits))
	for k := range splits {
		names = append(names, k)
	}
	sort.Strings(names)
	return kindf(ErrNotFound, "no split %q in config %q (splits: %s)", res.Split, res.Config, strings.Join(names, ", "))
}

// resolveURLs makes file URLs absolute against the endpoint.
func (c *Client) resolveURLs(urls []string) []string {
	base, _ := url.Parse(c.endpoint + "/")
	out := make([]string, len(urls))
	for i, s := range urls {
		out[i] = s
		if u, err := url.Parse(s); err == nil && base != nil {
			out[i] = base.ResolveReference(u).String()
		}
	}
	return out
}

// fetchFile brings one Parquet file into the cache, or confirms the cached
// copy with its ETag.
func (c *Client) fetchFile(ctx context.Context, res *Result, u string, n, total int) (File, int, error) {
	var fromCache func() File
	etag := ""
	if cached, ok := c.cache.file(u); ok {
		fromCache = func() File {
			return File{URL: u, Path: c.cache.blobPath(cached.Blob), ETag: cached.ETag, Size: cached.Size, Fetched: cached.Fetched}
		}
		etag = cached.ETag
	}
	if res.Offline != nil {
		if fromCache != nil {
			return fromCache(), 0, nil
		}
		return File{}, 0, fmt.Errorf("no cached copy of this file, and %w", res.Offline)
	}
	fresh := func(resp *http.Response) (File, error) { return c.download(resp, res, u, n, total) }
	return getCached(ctx, c, res, u, "file", etag, fromCache, fresh, nil)
}

func (c *Client) download(resp *http.Response, res *Result, u string, n, total int) (File, error) {
	if resp.ContentLength > c.maxFile {
		return File{}, kindf(ErrTooLarge, "file of %d bytes, more than the %d allowed", resp.ContentLength, c.maxFile)
	}
	pr := &progressReader{r: resp.Body, p: Progress{Dataset: res.Dataset, URL: u, File: n, Files: total, Total: resp.ContentLength}, fn: c.progress}
	pr.report()
	sum, size, err := c.cache.putBlob(pr, c.maxFile)
	if err != nil {
		if errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTooLarge) {
			return File{}, err
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return File{}, err // the cache, not the Hub
		}
		return File{}, &unreachable{fmt.Errorf("download cut short: %w", err)}
	}
	e := fileEntry{URL: u, ETag: resp.Header.Get("ETag"), Blob: sum, Size: size, Fetched: time.Now().UTC()}
	if err := c.cache.putFile(e); err != nil {
		c.logger.Warn("hub cache write failed", "err", err)
	}
	return File{URL: u, Path: c.cache.blobPath(sum), ETag: e.ETag, Size: size, Downloaded: true, Fetched: e.Fetched}, nil
}

// progressReader reports bytes read through fn.
type progressReader struct {
	r  io.Reader
	p  Progress
	fn func(Progress)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.p.Done += int64(n)
	if n > 0 {
		p.report()
	}
	return n, err
}

func (p *progressReader) report() {
	if p.fn != nil {
		p.fn(p.p)
	}
}
