// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/test/e2e"
	"github.com/agentguard/agentguard/test/harness"
)

var householdConfigs = []string{householdConfig, riskEndpointConfig}

// The household collector with the risk endpoint, fed a real LangGraph
// episode (ep-004) as its agent would export it mid-run: first the spans up
// to its fifth tool call (it leaves the kitchen with the stove on), then the
// rest (it stays away until the house is unsafe). As soon as each request
// is answered (probguard scores on arrival), the endpoint serves the warning
// at the fifth event, then the violation: an agent that flushed its spans
// can ask at once.
func TestWarningAtTheRiskEndpoint(t *testing.T) {
	t.Setenv("AGENTGUARD_HOUSEHOLD_MODEL", householdModel)
	endpoint := e2e.FreeAddr(t)
	t.Setenv("AGENTGUARD_RISK_ENDPOINT", endpoint)
	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := e2e.StartCollector(t, sink, householdConfigs...)
	url := "http://" + endpoint + "/v1/groups/ep-004"

	if code, _ := ask(t, url); code != http.StatusNotFound {
		t.Fatalf("before any span: %d, want 404", code)
	}
	first, rest := splitAtTool(t, "../../testdata/traces/household-langgraph/ep-004.json", 5)
	if _, err := e2e.Post(addr, first); err != nil {
		t.Fatal(err)
	}
	code, got := ask(t, url)
	if code != http.StatusOK || got.Event != 5 || !got.Warning || got.Kind != "risk" || got.Group != "ep-004" || got.PSafe == nil || *got.PSafe >= got.Threshold {
		t.Errorf("after the fifth tool call: %d %+v", code, got)
	}
	if b, err := json.MarshalIndent(got, "", "  "); err == nil {
		t.Logf("served after the fifth tool call:\n%s", b)
	}
	if _, err := e2e.Post(addr, rest); err != nil {
		t.Fatal(err)
	}
	code, got = ask(t, url)
	if code != http.StatusOK || got.Event != 13 || !got.Warning || got.Kind != "violation" {
		t.Errorf("after the last tool call: %d %+v", code, got)
	}
}

// ask GETs the endpoint once.
func ask(t *testing.T, url string) (int, riskendpoint.Response) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r riskendpoint.Response
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
	}
	return resp.StatusCode, r
}

// splitAtTool cuts a one-scope OTLP/JSON episode into two requests: the
// spans up to its nth TOOL span in export order, and the rest.
func splitAtTool(t *testing.T, path string, n int) (first, rest []byte) {
	t.Helper()
	reqs := e2e.Requests(t, path)
	var u ptrace.JSONUnmarshaler
	var m ptrace.JSONMarshaler
	parts := make([]ptrace.Traces, 2)
	for i := range parts {
		td, err := u.UnmarshalTraces(reqs[0])
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = td
	}
	cut, tools := -1, 0
	for i, sp := range parts[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
		if v, ok := sp.Attributes().Get("openinference.span.kind"); ok && v.Str() == "TOOL" {
			if tools++; tools == n {
				cut = i
				break
			}
		}
	}
	if cut < 0 {
		t.Fatalf("%s has fewer than %d tool spans", path, n)
	}
	for i, td := range parts {
		j := 0
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(ptrace.Span) bool {
			keep := (j <= cut) == (i == 0)
			j++
			return !keep
		})
	}
	var err error
	if first, err = m.MarshalTraces(parts[0]); err != nil {
		t.Fatal(err)
	}
	if rest, err = m.MarshalTraces(parts[1]); err != nil {
		t.Fatal(err)
	}
	return first, rest
}
