// SPDX-License-Identifier: Apache-2.0

package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// conversationKeys are the attributes a conversation goes by in the
// frameworks' traces.
var conversationKeys = []string{"gen_ai.conversation.id", "session.id", "gcp.vertex.agent.session_id",
	"traceloop.association.properties.session_id"}

// keyCount is, for one framework's recorded traces, how many spans carry
// each conversation key, on which span names (their first word), and how
// many resources carry one.
type keyCount struct {
	spans     int
	with      map[string]int
	names     map[string][]string
	resources int
}

func countKeys(t *testing.T, folder string) keyCount {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtures.Dir(), folder, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no trace files (%v)", folder, err)
	}
	c := keyCount{with: map[string]int{}, names: map[string][]string{}}
	for _, f := range files {
		td := fixtures.Traces(t, filepath.Join(folder, filepath.Base(f)))
		for _, rs := range td.ResourceSpans().All() {
			for _, k := range conversationKeys {
				if _, ok := rs.Resource().Attributes().Get(k); ok {
					c.resources++
				}
			}
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					c.spans++
					for _, k := range conversationKeys {
						if _, ok := s.Attributes().Get(k); ok {
							c.with[k]++
							name, _, _ := strings.Cut(s.Name(), " ")
							if !slices.Contains(c.names[k], name) {
								c.names[k] = append(c.names[k], name)
							}
						}
					}
				}
			}
		}
	}
	return c
}

// docs/scaling.md's table of frameworks, measured on the real recorded
// traces: the load-balancing exporter's attribute routing reads the first
// span of each trace's batch, so it keeps a conversation together only on a
// key every span carries. OpenInference and Traceloop put one on every span; Google
// ADK (Python and TypeScript) puts gen_ai.conversation.id on invoke_agent
// spans only, and its session id on one other kind of span.
func TestWhichFrameworksPutTheConversationOnEverySpan(t *testing.T) {
	for _, tc := range []struct {
		folder, everySpan string              // the key on every span; "" for none
		partial           map[string][]string // keys on some spans only: the span names carrying them
	}{
		{folder: "adk-weather", partial: map[string][]string{"gen_ai.conversation.id": {"invoke_agent"}, "gcp.vertex.agent.session_id": {"invocation"}}},
		{folder: "adk-js", partial: map[string][]string{"gen_ai.conversation.id": {"invoke_agent"}, "gcp.vertex.agent.session_id": {"call_llm"}}},
		{folder: "langgraph-openinference", everySpan: "session.id"},
		{folder: "household-langgraph", everySpan: "session.id"},
		{folder: "openai-agents-openinference", everySpan: "session.id"},
		{folder: "traceloop-langgraph", everySpan: "traceloop.association.properties.session_id"},
	} {
		c := countKeys(t, tc.folder)
		if c.resources != 0 {
			t.Errorf("%s: %d resources carry a conversation key", tc.folder, c.resources)
		}
		for _, k := range conversationKeys {
			n := c.with[k]
			switch {
			case k == tc.everySpan && n != c.spans:
				t.Errorf("%s: %s on %d of %d spans, want every span", tc.folder, k, n, c.spans)
			case k == tc.everySpan:
			case tc.partial[k] != nil:
				if n == 0 || n == c.spans || !slices.Equal(c.names[k], tc.partial[k]) {
					t.Errorf("%s: %s on %d of %d spans, named %v; want on %v spans only", tc.folder, k, n, c.spans, c.names[k], tc.partial[k])
				}
			case n != 0:
				t.Errorf("%s: %s on %d of %d spans (%v), want none", tc.folder, k, n, c.spans, c.names[k])
			}
		}
		t.Logf("%s: %d spans; %v on %v", tc.folder, c.spans, c.with, c.names)
	}
}
