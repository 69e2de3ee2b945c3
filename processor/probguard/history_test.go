// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// histories lists, in arrival order, the agentguard.history of probguard's
// reports, with whether the explanation ends with the matching note.
func histories(t *testing.T, sink *consumertest.TracesSink) []string {
	var out []string
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					for _, ev := range span.Events().All() {
						a := ev.Attributes().AsRaw()
						if ev.Name() != verdictattr.EvaluationEvent {
							continue
						}
						h, _ := a[verdictattr.History].(string)
						if e, _ := a[verdictattr.Explanation].(string); !strings.HasSuffix(e, verdictattr.HistoryNote(h)) {
							t.Errorf("explanation does not end with the note for %q: %s", h, e)
						}
						out = append(out, h)
					}
				}
			}
		}
	}
	return out
}

// A conversation first seen in the warm-up after a start is scored and
// reported as always, each report marked partial; without the warm-up the
// same reports are unmarked.
func TestReportsInTheWarmUpAreMarked(t *testing.T) {
	for _, tt := range []struct {
		warmUp time.Duration
		want   string
	}{{time.Hour, verdictattr.HistoryPartial}, {0, ""}} {
		cfg := stoveConfig(t)
		cfg.GroupBy, cfg.WarmUp = "conversation", &tt.warmUp
		p, sink := newTestProcessor(t, cfg, nopSettings())
		feed(t, p, fixtures.StoveTrace(0, "c1",
			fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "stir", Fork: true}))
		shutdown(t, p)
		got := histories(t, sink)
		if len(got) < 2 {
			t.Fatalf("warm_up %v: %d reports, want the risk and the violation", tt.warmUp, len(got))
		}
		for i, h := range got {
			if h != tt.want {
				t.Errorf("warm_up %v: report %d marked %q, want %q", tt.warmUp, i, h, tt.want)
			}
		}
	}
}
