package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/dataset/hub"
	_ "github.com/swebox/swebox/swebench/dataset/parquet" // dataset.ReadParquet and LoadDataset read .parquet files
)

// loadRows reads the dataset of a run: the file or directory at name when
// there is one (.json, .jsonl, .parquet, <dir>/<split>.*), otherwise the
// Hugging Face dataset or official alias name names, through the Hub's
// Parquet export and the cache, of config (the Hub's default when ""). What
// it did goes to w; on a terminal a
// download draws a progress bar there.
func loadRows(ctx context.Context, name, split, config string, w io.Writer) ([]dataset.Instance, error) {
	if _, err := os.Stat(name); err == nil || !dataset.IsHubName(name) {
		if config != "" {
			return nil, fmt.Errorf("--dataset_config %s names a config of a Hugging Face dataset; %s is a local dataset, which has none", config, name)
		}
		return dataset.LoadDatasetSplit(name, split)
	}
	bar := &downloadBar{w: w, tty: isTerminal(w)}
	c, err := hub.New(hub.WithProgress(bar.update))
	if err != nil {
		return nil, err
	}
	res, err := c.Load(ctx, hub.Request{Name: name, Split: split, Config: config})
	bar.finish()
	if err != nil {
		return nil, fmt.Errorf("%w%s", err, hubAdvice(err))
	}
	downloaded := 0
	for _, f := range res.Files {
		if f.Downloaded {
			downloaded++
		}
	}
	switch {
	case res.Offline != nil:
		fmt.Fprintf(w, "dataset %s (split %s): the Hub is unreachable (%v); using the cached copy downloaded %s: %d rows\n",
			res.Dataset, res.Split, res.Offline, res.Files[0].Fetched.Local().Format("2006-01-02 15:04"), len(res.Instances))
	case downloaded > 0:
		fmt.Fprintf(w, "dataset %s (split %s): %d rows, downloaded %d of %d Parquet files\n",
			res.Dataset, res.Split, len(res.Instances), downloaded, len(res.Files))
	default:
		fmt.Fprintf(w, "dataset %s (split %s): %d rows, the cached copy is current\n", res.Dataset, res.Split, len(res.Instances))
	}
	return res.Instances, nil
}

// hubAdvice says what to do about a failed load.
func hubAdvice(err error) string {
	switch {
	case errors.Is(err, hub.ErrNotFound):
		return " (check the name and --split; aliases: full, lite, verified, multilingual, multimodal; a local file must exist)"
	case errors.Is(err, hub.ErrAccess):
		return " (check HF_TOKEN)"
	case errors.Is(err, hub.ErrUnreachable):
		return " (check the network and HF_ENDPOINT; once downloaded, a split also loads offline from the cache)"
	case errors.Is(err, dataset.ErrBadParquet):
		return " (the download is not a Parquet file; it will be downloaded again on the next run)"
	}
	return ""
}

// downloadBar draws the progress of Hub downloads on a terminal, one line
// redrawn in place; elsewhere it stays silent.
type downloadBar struct {
	w     io.Writer
	tty   bool
	last  int // last drawn permille, to redraw only when it moves
	drawn bool
}

func (b *downloadBar) update(p hub.Progress) {
	if !b.tty {
		return
	}
	per := -1
	if p.Total > 0 {
		per = int(p.Done * 1000 / p.Total)
	}
	if b.drawn && per == b.last && p.Done != p.Total {
		return
	}
	b.last, b.drawn = per, true
	fmt.Fprintf(b.w, "\r\033[K%s", barLine(p, 30))
}

func (b *downloadBar) finish() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}

// barLine renders one progress line: the file, a bar and the byte counts.
func barLine(p hub.Progress, width int) string {
	prefix := fmt.Sprintf("downloading %s (file %d/%d) ", p.Dataset, p.File, p.Files)
	if p.Total <= 0 {
		return prefix + mib(p.Done)
	}
	fill := int(p.Done * int64(width) / p.Total)
	return fmt.Sprintf("%s[%s%s] %s / %s", prefix, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), mib(p.Done), mib(p.Total))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
