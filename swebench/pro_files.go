package swebench

import (
	"errors"
	"fmt"

	"github.com/swebox/swebox/swebench/family"
)

// refuseMissingFamilyFiles refuses a run in which a row's family needs
// files beside the rows that the run lacks (SWE-bench Pro's
// SWE-bench_Pro-os checkout, or a file of it for one instance): its
// harness cannot run such a row, and the error names what is missing
// before anything runs. The error wraps the first such instance's (a
// *family.ProFileError or family.ErrNoProCheckout).
func refuseMissingFamilyFiles(specs map[string]specEntry, ids []string) error {
	var first error
	n := 0
	for _, id := range ids {
		err := specs[id].err
		var pf *family.ProFileError
		if err == nil || !(errors.As(err, &pf) || errors.Is(err, family.ErrNoProCheckout)) {
			continue
		}
		if first == nil {
			first = err
		}
		n++
	}
	switch {
	case n == 0:
		return nil
	case n == 1:
		return first
	}
	return fmt.Errorf("%w (and %d more instances)", first, n-1)
}
