// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Allowlist is a predicate that holds at a call of any tool the list does
// not name (each entry a tool name or a glob): with `never`, only the
// listed tools may be called. It is the OTTL of {tool: '*'} and of none of
// the listed tools, so it reads every convention a tool predicate reads.
type Allowlist struct {
	Tools []string
}

func decodeAllowlist(raw any) (*Allowlist, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("allowlist: want a map {tools: [NAME, 'GLOB*', ...]}, got %T", raw)
	}
	var a Allowlist
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "tools" {
			return nil, fmt.Errorf("allowlist: unknown key %q: the valid key is tools", k)
		}
		var err error
		if a.Tools, err = stringList("allowlist: tools", m[k]); err != nil {
			return nil, err
		}
	}
	return &a, nil
}

func (a *Allowlist) validate() error {
	if len(a.Tools) == 0 {
		return errors.New("allowlist: tools is required: the tools that may be called (names or globs); an empty list would flag every call")
	}
	for _, t := range a.Tools {
		if strings.TrimSpace(t) == "" {
			return errors.New("allowlist: tools: an empty name")
		}
	}
	return nil
}

// ottl is the allowlist's condition: a tool call, of none of the tools.
func (a *Allowlist) ottl() string {
	listed := make([]string, len(a.Tools))
	for i, t := range a.Tools {
		listed[i] = "(" + ToolCondition(t) + ")"
	}
	return "(" + ToolCondition("*") + ") and not (" + strings.Join(listed, " or ") + ")"
}
