package dataset

import "strings"

// HubAlias returns the Hugging Face dataset that one of the official
// harness's dataset aliases names: v4.1.0's swe-bench and swe-bench-lite
// spellings and 5.0.2's full, verified, multilingual and multimodal
// (letter case and surrounding blanks ignored, as upstream does).
func HubAlias(name string) (full string, ok bool) {
	full, ok = hfAliases[strings.ToLower(strings.TrimSpace(name))]
	return full, ok
}

// IsHubName reports whether name is an alias or reads as a Hugging Face
// dataset id ("owner/name") rather than a file: it has one slash and does
// not end in a dataset file extension.
func IsHubName(name string) bool {
	if _, ok := HubAlias(name); ok {
		return true
	}
	for _, ext := range []string{".json", ".jsonl", ".parquet", ".arrow"} {
		if strings.HasSuffix(name, ext) {
			return false
		}
	}
	return hfName.MatchString(name)
}
