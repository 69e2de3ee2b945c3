// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// hostWith is a host running the given extensions.
type hostWith map[component.ID]component.Component

func (h hostWith) GetExtensions() map[component.ID]component.Component { return h }

// board records what probguard publishes, as the riskendpoint extension
// would take it.
type board struct {
	component.StartFunc
	component.ShutdownFunc
	open   map[string]*riskendpoint.Slot
	closed []string
}

func (b *board) Open(group string) *riskendpoint.Slot {
	s := &riskendpoint.Slot{}
	b.open[group] = s
	return s
}

func (b *board) Resume(group string) *riskendpoint.Slot {
	if s, ok := b.open[group]; ok {
		return s
	}
	return b.Open(group)
}

func (b *board) Close(group string, s *riskendpoint.Slot) {
	if b.open[group] == s {
		delete(b.open, group)
		b.closed = append(b.closed, group)
	}
}

// Each decision of a group is published to its slot, the latest replacing
// the one before, and the slot is closed when the group ends.
func TestPublishesToTheRiskEndpoint(t *testing.T) {
	id := component.MustNewID("riskendpoint")
	b := &board{open: map[string]*riskendpoint.Slot{}}
	cfg := stoveConfig(t)
	cfg.RiskEndpoint = &id
	p := createUnstarted(t, cfg, nopSettings())
	if err := p.Start(context.Background(), hostWith{id: b}); err != nil {
		t.Fatal(err)
	}
	td := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "stir", Fork: true})
	group := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	feed(t, p, td)
	p.Tick(time.Now().Add(5 * time.Second)) // scored; its group stays open

	slot := b.open[group]
	if slot == nil {
		t.Fatalf("no slot for group %s: %v", group, b.open)
	}
	d := slot.Latest()
	if d == nil {
		t.Fatal("nothing published")
	}
	a := d.Guard.Alert(d.Decision, d.Group, d.Event)
	if a.Event != 3 || a.State != "11" || a.Kind != "violation" || !a.Warning || d.SpanID.IsEmpty() {
		t.Errorf("latest %+v", a)
	}
	shutdown(t, p)
	if len(b.open) != 0 || len(b.closed) != 1 || b.closed[0] != group {
		t.Errorf("after shutdown: open %v, closed %v", b.open, b.closed)
	}
}

// A risk_endpoint that names no running extension, or one of another type,
// fails the start with what to fix.
func TestRiskEndpointErrors(t *testing.T) {
	id := component.MustNewID("riskendpoint")
	other := component.MustNewIDWithName("riskendpoint", "other")
	for _, c := range []struct {
		host component.Host
		want string
	}{
		{componenttest.NewNopHost(), `no extension "riskendpoint" is running`},
		{hostWith{other: &board{}}, `no extension "riskendpoint" is running`},
		{hostWith{id: struct {
			component.StartFunc
			component.ShutdownFunc
		}{}}, `extension "riskendpoint" is not a riskendpoint`},
	} {
		cfg := stoveConfig(t)
		cfg.RiskEndpoint = &id
		p, err := NewFactory().CreateTraces(context.Background(), nopSettings(), cfg, consumertest.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(context.Background(), c.host); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("start: %v, want %q", err, c.want)
		}
		if err := p.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

// startOnBoard starts probguard over conversations with the stove model,
// publishing to a recording board, until the test ends; time is now until
// tick moves it (the stage's clock goroutine reads it too).
func startOnBoard(t *testing.T, groupTimeout time.Duration) (p *probProcessor, b *board, now time.Time, tick func(time.Time)) {
	t.Helper()
	id := component.MustNewID("riskendpoint")
	b = &board{open: map[string]*riskendpoint.Slot{}}
	cfg := stoveConfig(t)
	cfg.RiskEndpoint, cfg.GroupBy, cfg.GroupTimeout = &id, "conversation", groupTimeout
	p = createUnstarted(t, cfg, nopSettings())
	now = time.Unix(1_800_000_000, 0)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	p.UseClock(func() time.Time { return time.Unix(0, clock.Load()) })
	tick = func(at time.Time) {
		clock.Store(at.UnixNano())
		p.Tick(at)
	}
	if err := p.Start(context.Background(), hostWith{id: b}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Shutdown(context.Background()) })
	return p, b, now, tick
}

// A conversation idle for compact_after goes dormant and keeps its slot:
// the endpoint still has its latest decision, and its next turn is scored
// from where it was, into the same slot.
func TestADormantConversationKeepsItsSlot(t *testing.T) {
	p, b, now, tick := startOnBoard(t, 10*time.Minute)
	feed(t, p, fixtures.StoveTrace(0, "kitchen", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}))
	tick(now.Add(5 * time.Second))
	slot := b.open["kitchen"]
	if slot == nil || slot.Latest() == nil {
		t.Fatalf("nothing published for the first turn: %v", b.open)
	}
	first := slot.Latest()
	tick(now.Add(time.Minute))
	if p.DormantGroups() != 1 || b.open["kitchen"] != slot || slot.Latest() != first {
		t.Fatalf("idle for a minute: %d dormant, slot kept %v, latest kept %v", p.DormantGroups(), b.open["kitchen"] == slot, slot.Latest() == first)
	}
	feed(t, p, fixtures.StoveTrace(1, "kitchen", fixtures.ToolCall{Tool: "stir", Fork: true}))
	tick(now.Add(time.Minute + 5*time.Second))
	d := slot.Latest()
	if b.open["kitchen"] != slot || d == first {
		t.Fatalf("the next turn: slot kept %v, a new decision %v", b.open["kitchen"] == slot, d != first)
	}
	if a := d.Guard.Alert(d.Decision, d.Group, d.Event); a.Event != 3 || a.State != "11" || a.Kind != "violation" {
		t.Errorf("the next turn, scored from where it was: %+v", a)
	}
}

// A conversation that leaves without ending here leaves no slot behind: one
// handed over to another collector of the tier, and one ended and kept
// (retention), once asked about; the one kept is answered from its state.
func TestAGroupThatLeavesLeavesNoSlot(t *testing.T) {
	p, b, now, tick := startOnBoard(t, time.Minute)
	feed(t, p, fixtures.StoveTrace(0, "kitchen", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}))
	feed(t, p, fixtures.StoveTrace(1, "hall", fixtures.ToolCall{Tool: "look"}))
	tick(now.Add(5 * time.Second))
	if b.open["kitchen"] == nil || b.open["hall"] == nil {
		t.Fatalf("slots %v, want kitchen's and hall's", b.open)
	}
	if _, found, err := p.HandOver(context.Background(), "kitchen", p.Fingerprint()); !found || err != nil {
		t.Fatalf("hand-over: found %v, %v", found, err)
	}
	if _, open := b.open["kitchen"]; open {
		t.Error("a conversation handed over left its slot behind")
	}
	tick(now.Add(2 * time.Minute)) // hall ends idle, and is kept
	if _, open := b.open["hall"]; open || p.OpenGroups() != 0 {
		t.Fatalf("hall ended: slot %v, %d open", open, p.OpenGroups())
	}
	a, err := p.Decide(context.Background(), riskendpoint.Question{Group: "hall", Action: fixtures.StoveTrace(2, "hall", fixtures.ToolCall{Tool: "look"})})
	if err != nil || !a.Open || a.Events != 1 {
		t.Errorf("a question about the kept hall: open %v, %d events, %v", a.Open, a.Events, err)
	}
	if _, open := b.open["hall"]; open {
		t.Error("a question about a kept conversation left a slot behind")
	}
}
