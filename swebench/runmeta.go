package swebench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/swebox/swebox/swebench/grade"
)

// RunMetadataFile is 5.0.2's record, in logs/run_evaluation/<run_id>/, of
// what a run graded against.
const RunMetadataFile = "run.json"

// RunMetadata is the content of run.json.
type RunMetadata struct {
	Dataset   string  `json:"dataset"`
	Split     string  `json:"split"`
	TaskRepo  *string `json:"task_repo"`
	CreatedAt string  `json:"created_at"`
}

// writeRunMetadata is 5.0.2's write_run_metadata: json.dumps of dataset,
// split, task_repo and created_at (UTC, seconds, "+00:00") with indent=2
// and a final newline. task_repo is the task repository given, else null
// or the value an earlier run.json of the same run recorded, which
// upstream keeps when a re-grade passes none.
func writeRunMetadata(runDir, datasetName, split, givenTaskRepo string, now time.Time) error {
	path := filepath.Join(runDir, RunMetadataFile)
	var taskRepo *string
	if givenTaskRepo != "" {
		taskRepo = &givenTaskRepo
	} else if raw, err := os.ReadFile(path); err == nil {
		var old RunMetadata
		if err := json.Unmarshal(raw, &old); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		taskRepo = old.TaskRepo
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	repo := "null"
	if taskRepo != nil {
		repo = grade.PyQuote(*taskRepo)
	}
	var b strings.Builder
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"dataset\": %s,\n", grade.PyQuote(datasetName))
	fmt.Fprintf(&b, "  \"split\": %s,\n", grade.PyQuote(split))
	fmt.Fprintf(&b, "  \"task_repo\": %s,\n", repo)
	fmt.Fprintf(&b, "  \"created_at\": %s\n", grade.PyQuote(now.UTC().Format("2006-01-02T15:04:05+00:00")))
	b.WriteString("}\n")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", runDir, err)
	}
	return writeFileAtomic(path, []byte(b.String()))
}
