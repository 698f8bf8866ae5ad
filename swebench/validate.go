package swebench

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
)

// Validate checks cfg without reading any file or reaching any engine: the
// values each field admits, and the fields that contradict each other. A
// problem is a *ConfigError naming the field (and the field it conflicts
// with); [Prepare] returns the same error, wrapped.
//
// Mode conflicts: Namespace (other than NoNamespace) and ImageTag ask for
// the official images; Image, ImageMap, ImageMapFile, Repos, RepoSources,
// KeepWorkspaces, ShareObjects and CopyWorkspace are workspace mode's. A
// field of one mode with a field (or the Mode) of the other is an error,
// never a silent choice. BuildImages asks for prebuilt mode in the images
// it builds, named without a namespace (Namespace NoNamespace). TaskRepo's
// rows each name their own image, so the fields that name images or ask
// for workspace mode contradict it.
func (cfg Config) Validate() error {
	if cfg.RunID == "" {
		return &ConfigError{Field: "RunID", Reason: "required"}
	}
	if _, err := dataset.SafePathComponent(dataset.KindRunID, cfg.RunID); err != nil {
		return &ConfigError{Field: "RunID", Value: cfg.RunID, Reason: err.Error(), Err: err}
	}
	if r := cfg.Rules.OrDefault(); !r.Valid() {
		return &ConfigError{Field: "Rules", Value: string(cfg.Rules), Reason: fmt.Sprintf("want %s or %s", harness.V4, harness.V5)}
	}
	if !cfg.GradingMode.Valid() {
		return &ConfigError{Field: "GradingMode", Value: string(cfg.GradingMode), Reason: fmt.Sprintf("want %s or %s", GradingOfficial, GradingStrict)}
	}
	if cfg.Mode != "" && !cfg.Mode.Valid() {
		return &ConfigError{Field: "Mode", Value: string(cfg.Mode), Reason: fmt.Sprintf("want %s or %s", harness.ModeWorkspace, harness.ModePrebuilt)}
	}
	if cfg.Family != "" {
		if _, ok := family.Lookup(cfg.Family); !ok {
			return &ConfigError{Field: "Family", Value: cfg.Family, Reason: "want one of " + strings.Join(family.Names(), ", "), Err: family.ErrUnknownFamily}
		}
	}
	if cfg.ProCheckout != "" {
		if fi, err := os.Stat(cfg.ProCheckout); err != nil || !fi.IsDir() {
			return &ConfigError{Field: "ProCheckout", Value: cfg.ProCheckout, Reason: "not a directory (a checkout of scaleapi/SWE-bench_Pro-os)", Err: err}
		}
	}
	if cfg.ImageMap != nil && cfg.ImageMapFile != "" {
		return &ConfigError{Field: "ImageMapFile", Conflict: "ImageMap", Reason: "give one image map"}
	}
	if cfg.Repeat < 0 {
		return &ConfigError{Field: "Repeat", Value: fmt.Sprint(cfg.Repeat), Reason: "negative"}
	}
	if cfg.Repeat > 1 && cfg.RewriteReports {
		return &ConfigError{Field: "Repeat", Value: fmt.Sprint(cfg.Repeat), Conflict: "RewriteReports", Reason: "the first runs the tests again, the second runs none"}
	}
	if err := cfg.Shard.check(); err != nil {
		return &ConfigError{Field: "Shard", Value: cfg.Shard.String(), Reason: err.Error(), Err: err}
	}
	if cfg.Gold && len(cfg.Predictions) > 0 {
		return &ConfigError{Field: "Predictions", Conflict: "Gold", Reason: "Gold makes the predictions from the dataset"}
	}
	ws, pb := cfg.workspaceField(), cfg.prebuiltField()
	if cfg.TaskRepo != "" {
		switch {
		case pb != "":
			return &ConfigError{Field: "TaskRepo", Conflict: pb, Reason: "each row names its own image (task.yaml image); the official images' namespace and tag do not apply"}
		case cfg.Namespace == NoNamespace:
			return &ConfigError{Field: "TaskRepo", Conflict: "Namespace", Reason: "each row names its own image (task.yaml image), built from its task's Dockerfile; the official images' namespace does not apply"}
		case cfg.Mode == harness.ModeWorkspace || ws == "Image" || ws == "ImageMap" || ws == "ImageMapFile":
			conflict := ws
			if cfg.Mode == harness.ModeWorkspace {
				conflict = "Mode"
			}
			return &ConfigError{Field: "TaskRepo", Conflict: conflict, Reason: "the task repository's rows run in the images built from their Dockerfiles; it does not run workspace mode"}
		}
	}
	if cfg.BuildImages != nil {
		switch {
		case cfg.Namespace != NoNamespace:
			return &ConfigError{Field: "BuildImages", Conflict: "Namespace", Value: cfg.Namespace, Reason: "images are built under upstream's local names, which only NoNamespace names"}
		case cfg.Mode == harness.ModeWorkspace:
			return &ConfigError{Field: "BuildImages", Conflict: "Mode", Reason: "the instances run in the images built, in prebuilt mode"}
		case ws != "":
			return &ConfigError{Field: ws, Conflict: "BuildImages", Reason: "the first applies to workspace mode; the instances run in the images built, in prebuilt mode"}
		}
	}
	switch {
	case ws != "" && pb != "":
		return &ConfigError{Field: ws, Conflict: pb, Reason: "the first applies to workspace mode, the second selects the official images"}
	case ws != "" && cfg.Mode == harness.ModePrebuilt:
		return &ConfigError{Field: ws, Conflict: "Mode", Value: "", Reason: "the first applies to workspace mode, the mode is prebuilt"}
	case pb != "" && cfg.Mode == harness.ModeWorkspace:
		return &ConfigError{Field: pb, Conflict: "Mode", Reason: "the first names official images, the mode is workspace"}
	}
	return nil
}

// IsNoNamespace reports whether ns, given as the official --namespace flag,
// is one of its spellings of "no namespace" ("none", "null" or "", in any
// letter case): Config.Namespace NoNamespace, the images named as the
// official harness builds them locally. A flag that was not given is
// Config's default instead, which is why "" is a spelling here only.
func IsNoNamespace(ns string) bool {
	switch strings.ToLower(ns) {
	case "", NoNamespace, "null":
		return true
	}
	return false
}

// workspaceField is the first field set that only workspace mode uses, ""
// when none is.
func (cfg Config) workspaceField() string {
	switch {
	case cfg.Image != "":
		return "Image"
	case len(cfg.ImageMap) > 0:
		return "ImageMap"
	case cfg.ImageMapFile != "":
		return "ImageMapFile"
	case cfg.Repos != nil:
		return "Repos"
	case len(cfg.RepoSources) > 0 && cfg.BuildImages == nil:
		// With BuildImages they are where the image builds read the
		// dependency files that upstream downloads.
		return "RepoSources"
	case cfg.KeepWorkspaces:
		return "KeepWorkspaces"
	case cfg.ShareObjects:
		return "ShareObjects"
	case cfg.CopyWorkspace:
		return "CopyWorkspace"
	}
	return ""
}

// prebuiltField is the first field set that names official images, ""
// when none is. NoNamespace with ImageTag names the images the official
// harness builds locally (sweb.eval.x86_64.<id>:<tag>).
func (cfg Config) prebuiltField() string {
	switch {
	case cfg.Namespace != "" && cfg.Namespace != NoNamespace:
		return "Namespace"
	case cfg.ImageTag != "":
		return "ImageTag"
	}
	return ""
}

// askedMode is the mode the fields ask for every instance, "" when none
// does (each instance then gets its own, see Config.Mode).
func (cfg Config) askedMode() harness.Mode {
	switch {
	case cfg.Mode != "":
		return cfg.Mode
	case cfg.BuildImages != nil:
		// The images built are the official images, built here.
		return harness.ModePrebuilt
	case cfg.prebuiltField() != "":
		return harness.ModePrebuilt
	case cfg.Namespace == NoNamespace, cfg.workspaceField() != "":
		return harness.ModeWorkspace
	}
	return ""
}

// WorkspaceImageError refuses a workspace-mode run of repositories the
// official harness knows in an image the image map does not name for
// them: the image would lack their dependencies, tests would fail for
// that, and the verdicts would differ from upstream's. The ways out: their
// official prebuilt images (no workspace mode), images built locally as
// upstream builds them (Namespace NoNamespace), or an image map entry for
// each repository.
type WorkspaceImageError struct {
	Repos []string // "owner/name", sorted
	Image string   // the image they would have run in
}

func (e *WorkspaceImageError) Error() string {
	return fmt.Sprintf("workspace mode would grade %s in %s, which the image map does not name for %s and which lacks their dependencies; "+
		"use the official prebuilt images, build them locally, or name an image for each in the image map",
		strings.Join(e.Repos, ", "), e.Image, pronoun(len(e.Repos)))
}

func (e *WorkspaceImageError) Unwrap() error { return ErrConfig }

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
