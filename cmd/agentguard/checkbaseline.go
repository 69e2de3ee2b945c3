// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// A baseline (--baseline FILE, a previous `check --format json` report)
// lets a gate fail only on violations that are new since it: each
// violation's fingerprint (checksarif.go: the assertion, the group key, the
// deciding span's name and the event numbers, not IDs or times) is looked
// up among the baseline's.

// loadBaseline reads the fingerprints of a previous report's violations.
func loadBaseline(path string) (map[string]bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	var prev checkReport
	if err := json.Unmarshal(raw, &prev); err != nil || prev.Findings == nil {
		return nil, fmt.Errorf("--baseline: %s is not a report of check --format json (%v)", path, err)
	}
	known := map[string]bool{}
	for _, f := range prev.Findings {
		if f.Label == verdictattr.LabelFail {
			known[fingerprint(f)] = true
		}
	}
	return known, nil
}

// applyBaseline marks each violation new or known, and counts the new.
func applyBaseline(rep *checkReport, known map[string]bool) {
	n := 0
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Label != verdictattr.LabelFail {
			continue
		}
		f.Baseline = "known"
		if !known[fingerprint(*f)] {
			f.Baseline = "new"
			n++
		}
	}
	rep.Summary.NewViolations = &n
}
