package spec

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
)

// ImageAsset is one entry of a row's image_assets: a binary file (an
// expected.png baseline, say) that a text patch cannot carry, at Path in
// the repository, fetched from URL.
type ImageAsset struct {
	Path string `json:"path"`
	URL  string `json:"url"`
}

// ImageAssets are a row's image_assets by the patch they belong to.
type ImageAssets struct {
	TestPatch []ImageAsset `json:"test_patch"`
	Patch     []ImageAsset `json:"patch"`
}

// jsRepos are the repositories whose v4.1.0 eval script is the JavaScript
// one (MAP_REPO_TO_EXT "js"): the common script with the test patch's
// image assets downloaded after the reset.
var jsRepos = map[string]bool{
	"Automattic/wp-calypso": true, "chartjs/Chart.js": true, "markedjs/marked": true,
	"processing/p5.js": true, "diegomura/react-pdf": true, "babel/babel": true, "vuejs/core": true,
	"facebook/docusaurus": true, "immutable-js/immutable-js": true, "mrdoob/three.js": true,
	"preactjs/preact": true, "axios/axios": true,
}

// parseImageAssets reads image_assets as upstream does: a JSON string
// (as on the Hub) or an object; empty means none. An entry without a path
// is an error, where upstream raises KeyError.
func parseImageAssets(id string, raw json.RawMessage) (ImageAssets, error) {
	var a ImageAssets
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		if text == "" {
			return a, nil
		}
		raw = json.RawMessage(text)
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("spec for %s: field image_assets: %w", id, err)
	}
	for i, list := range [][]ImageAsset{a.TestPatch, a.Patch} {
		for j, asset := range list {
			if asset.Path == "" {
				return a, fmt.Errorf("spec for %s: field image_assets: %s entry %d has no path", id, []string{"test_patch", "patch"}[i], j)
			}
		}
	}
	return a, nil
}

// downloadCommands is v4.1.0's get_download_img_commands: for each test
// patch asset, create its directory, fetch it with curl, make it writable
// by anyone. Paths and URLs are written unquoted, as upstream writes them.
func downloadCommands(assets ImageAssets) []string {
	var cmds []string
	for _, a := range assets.TestPatch {
		cmds = append(cmds,
			"mkdir -p "+pyParent(a.Path),
			"curl -o "+a.Path+" "+a.URL,
			"chmod 777 "+a.Path)
	}
	return cmds
}

// pyParent is str(pathlib.PurePosixPath(p).parent) for ordinary paths.
func pyParent(p string) string {
	p = path.Clean(p)
	if !strings.Contains(p, "/") {
		return "."
	}
	return path.Dir(p)
}

// imageAssetsFor sets the spec's assets and, for the v4.1.0 JavaScript
// script (a JavaScript repository without a row eval_script), the download
// commands.
//
// Malformed image_assets is an error where upstream reads them (a row
// with its own eval_script, as 5.0.2's make_test_spec does, or the v4.1.0
// JavaScript script) and a note elsewhere, where upstream never looks.
func imageAssetsFor(s *TestSpec, inst dataset.Instance) error {
	js := jsRepos[inst.Repo] && s.Script == ScriptCommon && s.DatasetScript == ""
	assets, err := parseImageAssets(inst.InstanceID, inst.ImageAssets)
	if err != nil {
		if js || s.DatasetScript != "" {
			return err
		}
		s.Notes = append(s.Notes, fmt.Sprintf("image_assets ignored, as upstream does for this script: %v", err))
		return nil
	}
	s.ImageAssets = assets
	if js {
		s.Downloads = downloadCommands(assets)
	}
	return nil
}
