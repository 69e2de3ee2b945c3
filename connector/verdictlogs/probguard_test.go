// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// stoveGuard is probguard's engine on spec V2's model, θ = 0.97.
func stoveGuard(t *testing.T) *guard.Guard {
	c := dtmc.NewCounts()
	for range 30 {
		if err := c.AddTrace([]dtmc.State{0, 0, 0, 0, 0, 0, 0b10}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := dtmc.Learn(dtmc.Spec{Predicates: []string{"fork_on_burner", "knob_on"}, Rules: dtmc.Rules{MaxChanges: 1}}, c)
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := dtmc.NewSolver(dtmc.Options{})
	g, err := guard.New(m, guard.Options{Property: dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: "fork_on_burner and knob_on"},
		Threshold: 0.97, Report: guard.ReportCrossing, Unknown: guard.UnknownAlert}, sv)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A risk and an unknown-state alert both warn, their explanation the body.
func TestProbguardWarningsBecomeWarnRecords(t *testing.T) {
	g := stoveGuard(t)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, bits := range []uint64{0b10, 0b01} { // knob on: a risk; fork on the burner alone: never seen
		sp := spans.AppendEmpty()
		sp.SetName("execute_tool step")
		g.Annotate(sp, g.Step(&guard.Run{}, bits), "trace-1", 1)
	}
	logs := runConnector(t, createDefaultConfig(), td)
	if len(logs) != 1 {
		t.Fatalf("%d batches", len(logs))
	}
	records := logs[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if records.Len() != 2 {
		t.Fatalf("%d records", records.Len())
	}
	for i, want := range []string{"P(stay safe) = 0.9685 < 0.97", "never seen in training"} {
		lr := records.At(i)
		if lr.SeverityNumber() != plog.SeverityNumberWarn || !strings.Contains(lr.Body().Str(), want) {
			t.Errorf("record %d: %v %q", i, lr.SeverityNumber(), lr.Body().Str())
		}
		if check, _ := lr.Attributes().Get(verdictattr.Check); check.Str() != verdictattr.CheckProb {
			t.Errorf("record %d: check %q", i, check.Str())
		}
	}
}
