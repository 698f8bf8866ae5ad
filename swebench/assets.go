package swebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

const (
	// assetTimeout bounds one image asset download, as 5.0.2's urlopen
	// timeout does.
	assetTimeout = 60 * time.Second
	// assetLimit caps one downloaded asset (rendering baselines are a few
	// hundred kilobytes).
	assetLimit = 64 << 20
	// assetPrefix names staged assets among the files of stagedDir.
	assetPrefix = "asset-"
)

// stagedAssets are a row's image assets fetched for one instance: the
// files to copy into stagedDir and the eval-script lines that put them in
// the working tree.
type stagedAssets struct {
	files   map[string][]byte
	restore []string
	// downloads, when not nil, replace the spec's Downloads: v4.1.0's
	// JavaScript download lines with each curl of a staged asset made a
	// copy (see stageDownloads).
	downloads []string
}

// stageAssets is 5.0.2's _stage_image_assets, for a run under v5 rules
// whose eval script does not fetch the assets itself: every test_patch,
// then patch, asset with a path is downloaded on the host into
// <instance log dir>/image_assets/<path with "/" as "__">, and a line
// "mkdir -p $(dirname P) && cp <staged> P" restores it after the test
// patch is applied, right before the start marker. An asset that cannot
// be fetched is logged and left out, as upstream does. The staged copy
// sits in /testbed/.git/swebox rather than upstream's /image_assets,
// because the sandbox's root is read-only.
func (e *evaluator) stageAssets(ctx context.Context, ts spec.TestSpec, dir string, ilog *instanceLog) (stagedAssets, error) {
	var out stagedAssets
	if len(ts.Downloads) > 0 {
		return e.stageDownloads(ctx, ts, dir, ilog)
	}
	if e.rules != harness.V5 {
		return out, nil
	}
	assets := append(append([]spec.ImageAsset(nil), ts.ImageAssets.TestPatch...), ts.ImageAssets.Patch...)
	if len(assets) == 0 {
		return out, nil
	}
	staging := filepath.Join(dir, "image_assets")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return out, fmt.Errorf("create %s: %w", staging, err)
	}
	out.files = map[string][]byte{}
	for _, a := range assets {
		data, err := fetchAsset(ctx, a.URL)
		if err != nil {
			ilog.printf("Could not fetch image asset %s: %v", a.URL, err)
			continue
		}
		flat := strings.ReplaceAll(a.Path, "/", "__")
		if _, err := dataset.SafePathComponent("image_assets path", flat); err != nil {
			return out, fmt.Errorf("image asset path %q: %w", a.Path, err)
		}
		if err := writeFileAtomic(filepath.Join(staging, flat), data); err != nil {
			return out, err
		}
		out.files[assetPrefix+flat] = data
		out.restore = append(out.restore, "mkdir -p $(dirname "+a.Path+") && cp "+stagedDir+"/"+assetPrefix+flat+" "+a.Path)
	}
	if len(out.restore) > 0 {
		ilog.printf("Staged %d patch asset(s) for restore after git apply (0 from the local mirror, %d fetched)", len(out.restore), len(out.restore))
	}
	return out, nil
}

// fetchAsset downloads one asset URL.
func fetchAsset(ctx context.Context, url string) ([]byte, error) {
	if url == "" {
		return nil, errors.New("no url")
	}
	ctx, cancel := context.WithTimeout(ctx, assetTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, assetLimit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > assetLimit {
		return nil, fmt.Errorf("larger than %d bytes", assetLimit)
	}
	return data, nil
}

// stageDownloads serves v4.1.0's JavaScript eval script (the Multimodal
// repositories), which fetches each test_patch image asset with
// "curl -o <path> <url>" inside the container after the reset. The
// sandbox has no network, so there curl fails and the rendering tests
// that compare with the baseline fail with it: a verdict upstream would
// not give. Instead the host fetches each asset, as stageAssets does for
// v5, into <instance log dir>/image_assets/, and the script's curl line
// becomes a copy from the staged file; the mkdir and chmod lines around it
// stay as upstream writes them. An asset the host cannot fetch is logged
// and its curl line dropped: the file is missing, as it would be where
// upstream's curl fails.
func (e *evaluator) stageDownloads(ctx context.Context, ts spec.TestSpec, dir string, ilog *instanceLog) (stagedAssets, error) {
	out := stagedAssets{files: map[string][]byte{}, downloads: []string{}}
	copies := map[string]string{} // curl line -> its replacement, "" to drop it
	for _, a := range ts.ImageAssets.TestPatch {
		curl := "curl -o " + a.Path + " " + a.URL
		copies[curl] = ""
		data, err := fetchAsset(ctx, a.URL)
		if err != nil {
			ilog.printf("Could not fetch image asset %s (upstream's eval.sh fetches it inside the container): %v", a.URL, err)
			continue
		}
		flat := strings.ReplaceAll(a.Path, "/", "__")
		if _, err := dataset.SafePathComponent("image_assets path", flat); err != nil {
			return out, fmt.Errorf("image asset path %q: %w", a.Path, err)
		}
		staging := filepath.Join(dir, "image_assets")
		if err := os.MkdirAll(staging, 0o755); err != nil {
			return out, fmt.Errorf("create %s: %w", staging, err)
		}
		if err := writeFileAtomic(filepath.Join(staging, flat), data); err != nil {
			return out, err
		}
		out.files[assetPrefix+flat] = data
		copies[curl] = "cp " + stagedDir + "/" + assetPrefix + flat + " " + a.Path
	}
	staged := 0
	for _, line := range ts.Downloads {
		cp, ok := copies[line]
		switch {
		case !ok:
			out.downloads = append(out.downloads, line)
		case cp != "":
			out.downloads = append(out.downloads, cp)
			staged++
		}
	}
	ilog.printf("Staged %d of %d image asset(s) on the host for eval.sh's downloads (the sandbox has no network)", staged, len(ts.ImageAssets.TestPatch))
	return out, nil
}
