// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// On a real household episode (OpenInference, the state in the result's
// ToolMessage content): a capture path its tool's calls hold is no suspect;
// a misspelt one is, with the paths they held; a tool never called is none
// (the predicate's never holding says so).
func TestCaptureWatchOnRecordedCalls(t *testing.T) {
	cfg := Config{Predicates: []Named{
		{Name: "stoveOn", Predicate: Predicate{Tool: "turn_on_stove", Capture: []Capture{{Name: "on", From: "result.stove_on"}}}},
		{Name: "stoveTypo", Predicate: Predicate{Tool: "turn_on_stove", Capture: []Capture{{Name: "on", From: "result.stove_onn"},
			{Name: "m", From: "result.minutes"}}}},
		{Name: "wentTo", Predicate: Predicate{Tool: "go_*", Capture: []Capture{{Name: "where", From: "args.room"}}}},
		{Name: "never", Predicate: Predicate{Tool: "fly_to", Capture: []Capture{{Name: "where", From: "args.city"}}}},
		{Name: "plain", Predicate: Predicate{Tool: "go_to"}},
	}}
	w := NewCaptureWatch(cfg.Literals())
	for _, l := range spansInOrder(fixtures.Traces(t, "household-langgraph/ep-001.json")) {
		w.Note(l.span)
	}
	got := w.Suspects()
	if len(got) != 1 {
		t.Fatalf("suspects %+v, want the one misspelt path", got)
	}
	s := got[0]
	if s.Predicate != "stoveTypo" || s.From != "result.stove_onn" || s.Tool != "turn_on_stove" || s.Calls == 0 {
		t.Errorf("suspect %+v", s)
	}
	if !slices.Contains(s.Seen, "result.stove_on") || !slices.Contains(s.Seen, "result.minutes") {
		t.Errorf("paths seen %q lack result.stove_on and result.minutes", s.Seen)
	}
	if NewCaptureWatch(Config{Predicates: []Named{{Name: "plain", Predicate: Predicate{Tool: "go_to"}}}}.Literals()) != nil {
		t.Error("a watch without captures")
	}
}
