// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/extension/riskendpoint/riskendpointtest"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// decisionsOf starts a riskendpoint extension on a free loopback port and
// the stove configuration publishing and answering there, with enforce.
func decisionsOf(t *testing.T, enforce string) (*probProcessor, string) {
	t.Helper()
	ext, url := riskendpointtest.Start(t)
	id := component.MustNewID("riskendpoint")
	cfg := stoveConfig(t)
	cfg.RiskEndpoint, cfg.Enforce = &id, enforce
	p := createUnstarted(t, cfg, nopSettings())
	if err := p.Start(context.Background(), hostWith{id: ext}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p, url
}

func decision(t *testing.T, url, group, body string) riskendpoint.DecisionResponse {
	t.Helper()
	resp, err := http.Post(url+"/v1/groups/"+group+"/decisions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d riskendpoint.DecisionResponse
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d, %v", body, resp.StatusCode, err)
	}
	return d
}

// With the knob on, putting the fork on the burner reaches the unsafe
// state: denied (enforce: deny), with P_safe 0; another look keeps the
// state at P_safe ≈ 0.9685 ≥ θ: allowed. The group's own run is unchanged.
func TestDecisionScoresTheStateTheActionLeadsTo(t *testing.T) {
	p, url := decisionsOf(t, "deny")
	td := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"})
	group := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	feed(t, p, td)

	fork := `{"action": {"span": {"name": "execute_tool stir", "attributes": [` +
		`{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},` +
		`{"key": "gen_ai.tool.name", "value": {"stringValue": "stir"}},` +
		`{"key": "env.fork_on_burner", "value": {"boolValue": true}}]}}}`
	d := decision(t, url, group, fork)
	if d.Decision != riskendpoint.Deny || len(d.Reasons) != 1 || d.Reasons[0].PSafe == nil || *d.Reasons[0].PSafe != 0 || d.Event != 3 {
		t.Errorf("the fork on the burner with the knob on: %+v", d)
	}
	if d := decision(t, url, group, `{"action": {"tool": "look"}}`); d.Decision != riskendpoint.Allow || len(d.Reasons) != 0 {
		t.Errorf("another look: %+v", d)
	}
	if d := decision(t, url, group, fork); d.Decision != riskendpoint.Deny || d.Event != 3 {
		t.Errorf("asking again: %+v (the first question changed the group)", d)
	}
}

// enforce: warn (the default) warns; off answers nothing.
func TestDecisionEnforceOfProbguard(t *testing.T) {
	for enforce, want := range map[string]string{"warn": riskendpoint.Warn, "off": riskendpoint.Allow} {
		p, url := decisionsOf(t, enforce)
		td := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "turn_on_stove"})
		group := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
		feed(t, p, td)
		d := decision(t, url, group, `{"action": {"span": {"name": "x", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}, {"key": "gen_ai.tool.name", "value": {"stringValue": "stir"}}, {"key": "env.fork_on_burner", "value": {"boolValue": true}}]}}}`)
		if d.Decision != want {
			t.Errorf("enforce %s: %+v", enforce, d)
		}
	}
}

// A group not held yet is answered as the collector will score the action:
// the first event of a new run. Lighting the burner with the fork on it as
// a new group's first call reaches the unsafe state: denied, though no
// processor holds the group; a first look is scored in the initial state,
// whose P_safe (0.9599) is below this configuration's θ (0.965), as the
// collector's first event there is.
func TestDecisionOnTheFirstActionOfANewGroup(t *testing.T) {
	_, url := decisionsOf(t, "deny")
	lightWithFork := `{"action": {"span": {"name": "execute_tool turn_on_stove", "attributes": [` +
		`{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},` +
		`{"key": "gen_ai.tool.name", "value": {"stringValue": "turn_on_stove"}},` +
		`{"key": "env.fork_on_burner", "value": {"boolValue": true}}]}}}`
	if d := decision(t, url, "never-seen", lightWithFork); d.Decision != riskendpoint.Deny || d.Group != nil || d.Event != 1 ||
		len(d.Reasons) < 1 || d.Reasons[0].PSafe == nil || *d.Reasons[0].PSafe != 0 {
		t.Errorf("the burner lit with the fork on it, first: %+v", d)
	}
	if d := decision(t, url, "never-seen", `{"action": {"tool": "look"}}`); d.Group != nil || len(d.Reasons) < 1 ||
		d.Reasons[0].PSafe == nil || *d.Reasons[0].PSafe < 0.9598 || *d.Reasons[0].PSafe > 0.96 {
		t.Errorf("a first look: %+v, want scored in the initial state", d)
	}
}

// With uncertainty, a reason gives P_safe's credible interval too; deciding
// on its lower bound, that bound is what fell below θ.
func TestDecisionReasonGivesTheInterval(t *testing.T) {
	ext, url := riskendpointtest.Start(t)
	id := component.MustNewID("riskendpoint")
	cfg := stoveConfig(t)
	cfg.RiskEndpoint, cfg.Enforce = &id, "deny"
	cfg.Uncertainty.Samples, cfg.DecideOn = 200, "lower_bound"
	p := createUnstarted(t, cfg, nopSettings())
	if err := p.Start(context.Background(), hostWith{id: ext}); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	td := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"})
	group := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	feed(t, p, td)
	d := decision(t, url, group, `{"action": {"tool": "stir"}}`)
	if len(d.Reasons) != 1 {
		t.Fatalf("turning the stove on: %+v, want one reason", d)
	}
	r := d.Reasons[0]
	if r.PSafeLow == nil || r.PSafeHigh == nil || r.PSafe == nil || !(*r.PSafeLow <= *r.PSafe && *r.PSafe <= *r.PSafeHigh) || *r.PSafeLow >= *r.Threshold {
		t.Errorf("reason %+v: want p_safe_low ≤ p_safe ≤ p_safe_high, the low below θ", r)
	}
}
