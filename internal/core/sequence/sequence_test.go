// SPDX-License-Identifier: Apache-2.0

package sequence

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// tools are the signals of adkTools: bit i for tools[i].
var tools = []string{"transfer_to_agent", "say_hello", "say_goodbye", "get_weather"}

// adkTools is a classifier for ADK's own telemetry: a tool span is an event,
// except the merged span; its signal is the tool's bit.
func adkTools(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) (bool, uint64) {
	v, ok := sp.Attributes().Get("gen_ai.tool.name")
	if !ok || v.Str() == "(merged tools)" {
		return false, 0
	}
	return true, 1 << slices.Index(tools, v.Str())
}

// names lists the events' tool names with their start, end and span ID
// order checked along the way.
func names(t *testing.T, evs []Event) []string {
	t.Helper()
	var out []string
	for i, e := range evs {
		if i > 0 && Compare(evs[i-1], e) >= 0 {
			t.Errorf("event %d not after event %d", i, i-1)
		}
		if e.Start != e.Span.StartTimestamp() {
			t.Errorf("event %d: Start %v, span starts %v", i, e.Start, e.Span.StartTimestamp())
		}
		v, _ := e.Span.Attributes().Get("gen_ai.tool.name")
		out = append(out, v.Str())
	}
	return out
}

// The adk-weather spans are shuffled within the file: Split must restore
// start order, and a conversation id found only on invoke_agent spans (not
// events) must still give the group.
func TestSplitShuffledADK(t *testing.T) {
	traces := Split(fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"), adkTools, "gen_ai.conversation.id")
	if len(traces) != 1 {
		t.Fatalf("%d traces", len(traces))
	}
	tr := traces[0]
	if want := []string{"transfer_to_agent", "say_hello", "transfer_to_agent"}; !slices.Equal(names(t, tr.Events), want) {
		t.Errorf("events %v, want %v", names(t, tr.Events), want)
	}
	if !tr.GroupFound || tr.Group != "session-194eb3ef" {
		t.Errorf("group %q (found %v)", tr.Group, tr.GroupFound)
	}
	if !strings.HasPrefix(tr.ID.String(), "0dbdc5") {
		t.Errorf("trace id %v", tr.ID)
	}
}

// ADK for TypeScript: two say_goodbye calls start in the same millisecond
// and are ordered as they were received; the merged span is no event.
func TestSplitMillisecondTies(t *testing.T) {
	traces := Split(fixtures.Traces(t, "adk-js/parallel-goodbye.json"), adkTools, ByTraceID)
	if len(traces) != 1 {
		t.Fatalf("%d traces", len(traces))
	}
	evs := traces[0].Events
	if want := []string{"transfer_to_agent", "say_goodbye", "say_goodbye"}; !slices.Equal(names(t, evs), want) {
		t.Fatalf("events %v, want %v", names(t, evs), want)
	}
	if evs[1].Start != evs[2].Start || evs[1].Arrival >= evs[2].Arrival {
		t.Errorf("expected a start tie broken by arrival: %v@%d, %v@%d", evs[1].Start, evs[1].Arrival, evs[2].Start, evs[2].Arrival)
	}
	if traces[0].Group != traces[0].ID.String() || !traces[0].GroupFound {
		t.Errorf("trace_id group %q", traces[0].Group)
	}
	if evs[1].Bits != 1<<2 || evs[0].Signals != 1 {
		t.Errorf("bits %b, signals %b", evs[1].Bits, evs[0].Signals)
	}
}

// Spans that tie on start are ordered as they arrived, whatever their end
// times and span IDs.
func TestSplitTieByArrival(t *testing.T) {
	for _, order := range [][]byte{{1, 2, 3}, {3, 1, 2}, {2, 3, 1}} {
		td := ptrace.NewTraces()
		ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		for i, id := range order {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{9})
			sp.SetSpanID(pcommon.SpanID{id})
			sp.SetStartTimestamp(1_000_000)
			sp.SetEndTimestamp(pcommon.Timestamp(3_000_000 - i)) // later arrivals end earlier
			sp.Attributes().PutStr("gen_ai.tool.name", tools[id])
		}
		var want []string
		for _, id := range order {
			want = append(want, tools[id])
		}
		evs := Split(td, adkTools, ByTraceID)[0].Events
		if got := names(t, evs); !slices.Equal(got, want) {
			t.Errorf("arrival %v: %v, want %v", order, got, want)
		}
	}
}

// jsSpans is a trace as the OpenTelemetry JS SDK exports it: n tool calls run
// one after another, fast enough that several start in one millisecond. A
// start is Date.now() (whole milliseconds); an end is that truncated start
// plus the precise duration, so it is early by the lost fraction; the batch
// processor queues spans as they end, so they arrive in their true order.
func jsSpans(rng *rand.Rand, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	clock := 1_700_000_000_000_000_000 + rng.Float64()*1e6 // ns, precise
	for i := range n {
		start := clock + rng.Float64()*200_000 // a gap under 0.2 ms
		duration := 50_000 + rng.Float64()*400_000
		clock = start + duration
		ms := math.Floor(start/1e6) * 1e6
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{7})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		sp.SetStartTimestamp(pcommon.Timestamp(ms))
		sp.SetEndTimestamp(pcommon.Timestamp(ms + duration))
		sp.Attributes().PutInt("call", int64(i))
		sp.Attributes().PutStr("gen_ai.tool.name", tools[rng.IntN(len(tools))])
	}
	return td
}

// On JS SDK timestamps the events come out in their true order; ordering
// ties by end time (the rule before) gets many wrong.
func TestJSTimestampsTrueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ties, byEndWrong := 0, 0
	for range 500 {
		td := jsSpans(rng, 8)
		evs := Split(td, adkTools, ByTraceID)[0].Events
		for i, e := range evs {
			if call, _ := e.Span.Attributes().Get("call"); call.Int() != int64(i) {
				t.Fatalf("event %d is call %d", i, call.Int())
			}
			if i > 0 && e.Start == evs[i-1].Start {
				ties++
				if e.Span.EndTimestamp() < evs[i-1].Span.EndTimestamp() {
					byEndWrong++
				}
			}
		}
	}
	if ties == 0 || byEndWrong == 0 {
		t.Fatalf("the generator made %d same-millisecond ties, %d that end order gets wrong: it tests nothing", ties, byEndWrong)
	}
	t.Logf("%d same-millisecond ties, %d of them misordered by end time", ties, byEndWrong)
}

// One conversation, two traces (one per user turn): both get the group of
// their invoke_agent spans, and Merge puts the events of the two turns in
// one order, on which Fold runs a latch-like step.
func TestGroupAcrossTracesAndMerge(t *testing.T) {
	traces := Split(fixtures.Traces(t, "adk-js/weak-run-05.json"), adkTools, "gen_ai.conversation.id")
	if len(traces) != 2 {
		t.Fatalf("%d traces", len(traces))
	}
	if !traces[0].GroupFound || traces[0].Group != traces[1].Group {
		t.Fatalf("groups %q, %q", traces[0].Group, traces[1].Group)
	}
	if traces[0].Events[0].Start > traces[1].Events[0].Start {
		t.Error("traces not ordered by their first span")
	}
	merged := Merge(traces[1].Events, traces[0].Events)
	want := []string{"transfer_to_agent", "say_hello", "transfer_to_agent", "transfer_to_agent", "get_weather"}
	if got := names(t, merged); !slices.Equal(got, want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	// A latch on bit 4 set by say_hello: holds from the second event on.
	var on uint64
	Fold(merged, func(sig uint64) uint64 {
		if sig&2 != 0 {
			on = 1 << 4
		}
		return sig | on
	})
	for i, e := range merged {
		if got := e.Bits&(1<<4) != 0; got != (i >= 1) {
			t.Errorf("event %d: latch %v", i, got)
		}
	}
}

// The group key is the first value in start order, on a span, else on a
// resource; without it the trace has no group.
func TestGroupKeySources(t *testing.T) {
	td := ptrace.NewTraces()
	mk := func(rs ptrace.ResourceSpans, trace byte, start pcommon.Timestamp, key, value string) {
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{trace})
		sp.SetSpanID(pcommon.SpanID{byte(start)})
		sp.SetStartTimestamp(start)
		if key != "" {
			sp.Attributes().PutStr(key, value)
		}
	}
	withSession := td.ResourceSpans().AppendEmpty()
	withSession.Resource().Attributes().PutStr("session.id", "from-resource")
	plain := td.ResourceSpans().AppendEmpty()
	mk(plain, 1, 30, "session.id", "later")
	mk(plain, 1, 20, "session.id", "earlier")
	mk(withSession, 1, 10, "", "") // resource key on the earliest span loses to a span's own
	mk(withSession, 2, 10, "", "")
	mk(plain, 3, 10, "", "")
	traces := Split(td, adkTools, "session.id")
	got := map[byte]string{}
	for _, tr := range traces {
		if tr.GroupFound {
			got[tr.ID[0]] = tr.Group
		} else {
			got[tr.ID[0]] = "<none>"
		}
	}
	want := map[byte]string{1: "earlier", 2: "from-resource", 3: "<none>"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("trace %d: group %q, want %q", id, got[id], w)
		}
	}
	if len(traces[0].Events) != 0 {
		t.Errorf("no tool spans, yet events %v", traces[0].Events)
	}
}

// A span and the events it encloses often start in one millisecond, and
// the SDK exports the parent after its children: an enclosing event still
// comes first, through spans that are no events (an agent, its model call,
// the tool it calls), and stays first when traces are merged. Events that
// do not enclose one another keep their arrival order.
func TestParentBeforeChildOnATie(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	add := func(id, parent byte, tool string) {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{5})
		sp.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			sp.SetParentSpanID(pcommon.SpanID{parent})
		}
		sp.SetStartTimestamp(1_000_000)
		sp.SetEndTimestamp(2_000_000)
		if tool != "" {
			sp.Attributes().PutStr("gen_ai.tool.name", tool)
		}
	}
	// As exported: the tool (4, under the model call 3, under 1), the model
	// call, a sibling call (2, under 1), then the enclosing one (1).
	add(4, 3, "say_hello")
	add(3, 1, "")
	add(2, 1, "get_weather")
	add(1, 0, "transfer_to_agent")
	evs := Split(td, adkTools, ByTraceID)[0].Events
	if got, want := names(t, evs), []string{"transfer_to_agent", "say_hello", "get_weather"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if got := names(t, Merge(evs[1:], evs[:1])); !slices.Equal(got, []string{"transfer_to_agent", "say_hello", "get_weather"}) {
		t.Errorf("merged: %v", got)
	}
}
