package swebench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/swebox/swebox/swebench/grade"
)

// retryLine begins the run_instance.log line that opens an attempt after
// the cluster lost the sandbox of the one before.
const retryLine = "Sandbox lost: retry"

// retriesFile records, beside the official files, the attempts of an
// instance that the cluster cut short, so that a rerun that keeps the
// instance's report.json still reports them.
const retriesFile = "swebox_retries.json"

// recordRetries writes retriesFile when there were retries.
func recordRetries(dir string, retries []grade.Retry) error {
	if len(retries) == 0 {
		return nil
	}
	b, err := json.Marshal(retries)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, retriesFile), append(b, '\n'))
}

// recordedRetries reads retriesFile; nil when there is none or it is
// unreadable.
func recordedRetries(dir string) []grade.Retry {
	b, err := os.ReadFile(filepath.Join(dir, retriesFile))
	if err != nil {
		return nil
	}
	var r []grade.Retry
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	return r
}

// lostHook, when set (by tests), runs once an attempt's sandbox has
// started, with the attempt's context, the instance id and the number of
// earlier lost attempts; an error it returns ends the attempt as if the
// sandbox had failed so.
var lostHook func(ctx context.Context, instanceID string, retry int) error
