// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/extension/riskendpoint/riskendpointtest"
)

// denier answers every question with a deny by one assertion.
type denier struct{}

func (denier) Decide(context.Context, riskendpoint.Question) (riskendpoint.Answer, error) {
	return riskendpoint.Answer{Open: true, Events: 3, Reasons: []riskendpoint.Reason{{
		Processor: "temporalcheck/te", Assertion: "te1", Effect: riskendpoint.Deny,
		Explanation: "Expected xferToWeather at event 4; came transfer to greeting_agent"}}}, nil
}

// With decisions set, every decision the riskendpoint answers is a record:
// what was asked, the answer and why.
func TestEveryDecisionIsARecord(t *testing.T) {
	ext, base := riskendpointtest.Start(t)
	unregister := ext.(riskendpoint.Registry).Register("temporalcheck/te", denier{})
	defer unregister()
	id := component.MustNewID("riskendpoint")
	cfg := createDefaultConfig()
	cfg.Decisions = &id
	sink := new(consumertest.LogsSink)
	c, err := NewFactory().CreateTracesToLogs(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), riskendpointtest.Host{id: ext}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/v1/groups/conv-1/decisions", "application/json",
		strings.NewReader(`{"action": {"transfer_to": "greeting_agent"}, "after_span_id": "5ab1d52ffe8645bc"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sink.LogRecordCount() != 1 {
		t.Fatalf("%d records, want 1", sink.LogRecordCount())
	}
	lr := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	a := lr.Attributes().AsRaw()
	for k, want := range map[string]any{"agentguard.group": "conv-1", "agentguard.decision": "deny",
		"agentguard.action": `{"transfer_to":"greeting_agent"}`, "agentguard.after_span_id": "5ab1d52ffe8645bc", "agentguard.stale": false} {
		if a[k] != want {
			t.Errorf("%s = %v, want %v", k, a[k], want)
		}
	}
	if lr.SeverityText() != "WARN" || lr.EventName() != "agentguard.decision" ||
		!strings.Contains(lr.Body().Str(), "deny") || !strings.Contains(lr.Body().Str(), "Expected xferToWeather") {
		t.Errorf("record %s %s %q", lr.SeverityText(), lr.EventName(), lr.Body().Str())
	}
	if reasons, _ := a["agentguard.reasons"].([]any); len(reasons) != 1 {
		t.Errorf("reasons %v, want te1's", a["agentguard.reasons"])
	}
}

// decisions naming no running extension, or one that answers no
// decisions, fails the start with the setting's name.
func TestDecisionsNeedsARiskEndpoint(t *testing.T) {
	id := component.MustNewID("riskendpoint")
	notAnEndpoint := struct {
		component.StartFunc
		component.ShutdownFunc
	}{}
	for _, host := range []component.Host{componenttest.NewNopHost(), riskendpointtest.Host{id: notAnEndpoint}} {
		cfg := createDefaultConfig()
		cfg.Decisions = &id
		c, err := NewFactory().CreateTracesToLogs(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, new(consumertest.LogsSink))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(context.Background(), host); err == nil || !strings.HasPrefix(err.Error(), "decisions:") {
			t.Errorf("start: %v, want an error about decisions", err)
		}
	}
}

// A probguard reason keeps its numbers in the record: P_safe, its interval
// where there is one, and θ.
func TestReasonsKeepTheirNumbers(t *testing.T) {
	low, ps, high, theta := 0.6, 0.75, 0.85, 0.7
	s := pcommon.NewSlice()
	putReasons(s, []riskendpoint.Reason{{Processor: "probguard", PSafe: &ps, PSafeLow: &low, PSafeHigh: &high, Threshold: &theta, Effect: "warn"},
		{Processor: "probguard", PSafe: &ps, Threshold: &theta, Effect: "warn"}})
	with, without := s.At(0).Map().AsRaw(), s.At(1).Map().AsRaw()
	if with["p_safe_low"] != low || with["p_safe"] != ps || with["p_safe_high"] != high || with["threshold"] != theta {
		t.Errorf("with an interval: %v", with)
	}
	if _, ok := without["p_safe_low"]; ok || without["p_safe"] != ps {
		t.Errorf("without one: %v", without)
	}
}
