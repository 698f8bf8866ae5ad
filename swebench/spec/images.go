package spec

import (
	"encoding/json"
	"fmt"

	"github.com/swebox/swebox/swebench/dataset"
)

// ImageMap maps repositories to images for workspace mode. Keys are
// "owner/name" or "owner/name:version"; the version-specific key wins.
//
// File format (JSON):
//
//	{
//	  "pallets/flask": "swebox/python:bookworm",
//	  "django/django": "example/django-env:latest",
//	  "django/django:1.9": "example/django-env:py35"
//	}
type ImageMap struct {
	m map[string]string
}

// NewImageMap builds an image map from key → image pairs, with the checks
// of LoadImageMap.
func NewImageMap(m map[string]string) (ImageMap, error) {
	out := ImageMap{m: make(map[string]string, len(m))}
	for k, img := range m {
		if err := out.set(k, img); err != nil {
			return ImageMap{}, &FileError{File: "(image map)", Key: k, Err: err}
		}
	}
	return out, nil
}

func (im *ImageMap) set(key, img string) error {
	repo, version, err := parseKey(key)
	if err != nil {
		return err
	}
	if err := checkImage(img); err != nil {
		return err
	}
	im.m[mapKey(repo, version)] = img
	return nil
}

func mapKey(repo, version string) string {
	if version == "" {
		return repo
	}
	return repo + ":" + version
}

// LoadImageMap reads an image map file. Errors are *FileError values
// naming the file, line and key.
func LoadImageMap(path string) (ImageMap, error) {
	members, err := readObjectFile(path)
	if err != nil {
		return ImageMap{}, err
	}
	im := ImageMap{m: make(map[string]string, len(members))}
	for _, mb := range members {
		var img string
		if dataset.JSONKind(mb.raw) != "string" {
			return ImageMap{}, &FileError{File: path, Line: mb.line, Key: mb.key, Err: fmt.Errorf("want an image name (string), got %s", dataset.JSONKind(mb.raw))}
		}
		if err := json.Unmarshal(mb.raw, &img); err != nil {
			return ImageMap{}, &FileError{File: path, Line: mb.line, Key: mb.key, Err: err}
		}
		if err := im.set(mb.key, img); err != nil {
			return ImageMap{}, &FileError{File: path, Line: mb.line, Key: mb.key, Err: err}
		}
	}
	return im, nil
}

// Lookup returns the image for repo at version: the "owner/name:version"
// entry if there is one, else the "owner/name" entry.
func (im ImageMap) Lookup(repo, version string) (string, bool) {
	if img, ok := im.lookupExact(repo, version); ok {
		return img, true
	}
	return im.lookupExact(repo, "")
}

func (im ImageMap) lookupExact(repo, version string) (string, bool) {
	if im.m == nil || (version == "" && repo == "") {
		return "", false
	}
	img, ok := im.m[mapKey(repo, version)]
	return img, ok
}

// Len is the number of entries.
func (im ImageMap) Len() int { return len(im.m) }
