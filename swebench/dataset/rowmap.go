package dataset

import (
	"encoding/json"
	"sync"
)

// A RowMapper rewrites a row of a task family's own schema (one without
// instance_id, repo and base_commit as SWE-bench spells them, such as
// Multi-SWE-bench's org, repo, number and base.sha) into the fields this
// package decodes. It returns ok false for a row that is not of its
// schema, and an error for one that is but cannot be mapped. The fields it
// returns replace the row's; whatever it keeps that this package does not
// know lands in [Instance.Extra] as usual.
type RowMapper func(fields map[string]json.RawMessage) (mapped map[string]json.RawMessage, ok bool, err error)

var (
	rowMappersMu sync.RWMutex
	rowMappers   []RowMapper
)

// RegisterRowMapper adds m to the mappers every decoded row is offered to,
// in registration order; the first that claims a row maps it. Task families
// register theirs from init (swebench/family).
func RegisterRowMapper(m RowMapper) {
	rowMappersMu.Lock()
	defer rowMappersMu.Unlock()
	rowMappers = append(rowMappers, m)
}

// mapRow offers fields to the registered mappers.
func mapRow(fields map[string]json.RawMessage) (map[string]json.RawMessage, *fieldError) {
	rowMappersMu.RLock()
	defer rowMappersMu.RUnlock()
	for _, m := range rowMappers {
		mapped, ok, err := m(fields)
		if err != nil {
			return nil, &fieldError{"", err}
		}
		if ok {
			return mapped, nil
		}
	}
	return fields, nil
}
