// SPDX-License-Identifier: Apache-2.0

package events

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
)

func meterSource(t *testing.T, preds ...map[string]any) *Source {
	t.Helper()
	list := []any{map[string]any{"name": "anyTool", "tool": "*"}}
	for _, p := range preds {
		list = append(list, p)
	}
	var cfg predicate.Config
	if err := confmap.NewFromStringMap(map[string]any{"predicates": list}).Unmarshal(&cfg); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(cfg, sequence.ByTraceID, componenttest.NewNopTelemetrySettings())
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// extract is one file's events as one group's.
func extract(t *testing.T, src *Source, file string) []sequence.Event {
	t.Helper()
	latch := src.NewLatch()
	evs, errs := src.Extract(fixtures.Traces(t, file), &latch)
	if errs.Count != 0 {
		t.Fatalf("%s: OTTL errors: %v", file, errs.First)
	}
	return evs
}

func spanIDs(evs []sequence.Event) []pcommon.SpanID {
	out := make([]pcommon.SpanID, len(evs))
	for i, ev := range evs {
		out[i] = ev.Span.SpanID()
	}
	return out
}

// A token budget reads each convention's usage attributes (the totals were
// summed from the files by hand: one model call, one convention, counted
// once): it holds at the model call that crosses the bound, one model call
// too many, and nowhere at the bound itself; the crossing call becomes an
// event of its own and no other model call does, so every other event is
// the one a configuration without the budget sees.
func TestTokenBudgetReadsEveryConvention(t *testing.T) {
	for _, c := range []struct {
		file  string
		total int
	}{
		{"adk-js/strong-run-01.json", 3331},                            // gen_ai.usage.input_tokens / output_tokens
		{"langgraph-openinference/strong-explicit-handback.json", 468}, // llm.token_count.prompt / completion
		{"openai-agents-openinference/strong.json", 426},               // llm.token_count.*
		{"traceloop-langgraph/strong-explicit-handback.json", 468},     // gen_ai.usage.*, besides llm.usage.total_tokens
	} {
		plain := spanIDs(extract(t, meterSource(t), c.file))
		for _, bound := range []int{c.total - 1, c.total} {
			src := meterSource(t, map[string]any{"name": "overBudget", "budget": map[string]any{"sum": "tokens", "max": bound}})
			evs := extract(t, src, c.file)
			var crossed []sequence.Event
			var others []sequence.Event
			for _, ev := range evs {
				if ev.Bits&2 != 0 {
					crossed = append(crossed, ev)
				} else {
					others = append(others, ev)
				}
			}
			want := 0
			if bound < c.total {
				want = 1
			}
			if len(crossed) != want {
				t.Fatalf("%s, max %d: the budget held at %d events, want %d", c.file, bound, len(crossed), want)
			}
			if !slices.Equal(spanIDs(others), plain) {
				t.Errorf("%s, max %d: the other events changed: %v, want %v", c.file, bound, spanIDs(others), plain)
			}
			if want == 1 {
				note, _ := crossed[0].Span.Attributes().Get(predicate.MeterNoteAttribute)
				if !strings.Contains(note.Str(), "reached "+strconv.Itoa(c.total)) || crossed[0].Bits != 2 {
					t.Errorf("%s: the crossing span says %q, bits %b", c.file, note.Str(), crossed[0].Bits)
				}
			}
		}
	}
}

// toolSpan appends a tool call span with its JSON arguments and result.
func toolSpan(ss ptrace.ScopeSpans, start int, tool, args, result string) {
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1})
	sp.SetSpanID(pcommon.SpanID{byte(start + 1)})
	sp.SetStartTimestamp(pcommon.Timestamp(start * 1000))
	sp.SetEndTimestamp(pcommon.Timestamp(start*1000 + 500))
	sp.SetName("execute_tool " + tool)
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "execute_tool")
	a.PutStr("gen_ai.tool.name", tool)
	a.PutStr("gcp.vertex.agent.tool_call_args", args)
	a.PutStr("gcp.vertex.agent.tool_response", result)
}

func calls(spans ...[3]string) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i, c := range spans {
		toolSpan(ss, i, c[0], c[1], c[2])
	}
	return td
}

// heldAt is the positions (from 1) of the events where predicate bit holds.
func heldAt(evs []sequence.Event, bit int) []int {
	var out []int
	for i, ev := range evs {
		if ev.Bits&(1<<bit) != 0 {
			out = append(out, i+1)
		}
	}
	return out
}

// repeats holds at the call that makes n equal keys in the window, and
// again only after the count fell below n; key [tool, args] tells
// arguments apart whatever their key order; [tool, result] ignores the
// arguments; no_progress counts one tool's equal results in a row.
func TestRepeatsAndNoProgress(t *testing.T) {
	paris, parisAgain, rome := `{"city":"Paris","unit":"C"}`, `{"unit":"C","city":"Paris"}`, `{"city":"Rome","unit":"C"}`
	same := `{"report":"sunny"}`
	td := calls(
		[3]string{"get_weather", paris, same},
		[3]string{"get_weather", rome, same},
		[3]string{"get_weather", parisAgain, same},
		[3]string{"say_hello", `{}`, `{"ok":true}`},
		[3]string{"get_weather", paris, `{"report":"rain"}`},
		[3]string{"get_weather", rome, `{"report":"rain"}`},
		[3]string{"get_weather", paris, `{"report":"rain"}`},
	)
	for _, c := range []struct {
		name string
		pred map[string]any
		want []int
	}{
		{"args twice in 3", map[string]any{"repeats": map[string]any{"key": []any{"tool", "args"}, "n": 2, "within": 3}}, []int{3, 5, 7}},
		{"args three times", map[string]any{"repeats": map[string]any{"n": 3, "within": 10}}, []int{5}},
		{"result three times", map[string]any{"repeats": map[string]any{"key": []any{"tool", "result"}, "n": 3}}, []int{3, 7}},
		{"tool alone", map[string]any{"repeats": map[string]any{"key": []any{"tool"}, "n": 4, "within": 5}}, []int{5}},
		{"no progress", map[string]any{"no_progress": map[string]any{"k": 3}}, []int{3, 7}},
	} {
		pred := c.pred
		pred["name"] = "meter"
		src := meterSource(t, pred)
		latch := src.NewLatch()
		if evs, _ := src.Extract(calls(), &latch); len(evs) != 0 { // an empty chunk changes nothing
			t.Fatalf("%s: events in an empty chunk", c.name)
		}
		evs, _ := src.Extract(td, &latch)
		if got := heldAt(evs, 1); !slices.Equal(got, c.want) {
			t.Errorf("%s: held at %v, want %v", c.name, got, c.want)
		}
	}
}

// A group's meters go on across chunks (a conversation's turns come as
// traces one after the other), survive a checkpoint, and a clone (what a
// decision hypothesises) leaves the group's own as they were.
func TestMetersAcrossChunksCheckpointAndClone(t *testing.T) {
	src := meterSource(t, map[string]any{"name": "meter", "repeats": map[string]any{"n": 2, "within": 5}})
	first := calls([3]string{"get_weather", `{"city":"Paris"}`, `{}`})
	second := func() ptrace.Traces { return calls([3]string{"get_weather", `{"city":"Paris"}`, `{}`}) }
	latch := src.NewLatch()
	src.Extract(first, &latch)

	hypo := latch.Clone()
	if evs, _ := src.Extract(second(), &hypo); !slices.Equal(heldAt(evs, 1), []int{1}) {
		t.Fatalf("the clone does not continue the group: %v", heldAt(evs, 1))
	}
	saved := latch.AppendMeters(nil)
	restored := src.NewLatch()
	if err := restored.RestoreMeters(saved); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]*predicate.Latch{"the group after a clone": &latch, "restored": &restored} {
		if evs, _ := src.Extract(second(), l); !slices.Equal(heldAt(evs, 1), []int{1}) {
			t.Errorf("%s: the repeat in the next chunk held at %v, want [1]", name, heldAt(evs, 1))
		}
	}
	if l := src.NewLatch(); l.RestoreMeters(saved[:len(saved)-1]) == nil {
		t.Error("a truncated meter state was restored")
	}
	if l := meterSource(t).NewLatch(); l.RestoreMeters(saved) == nil {
		t.Error("a meter state was restored where no meter is configured")
	}
}

// A model call denied by an agent's hook did not happen: it adds nothing.
func TestDeniedSpanAddsNothing(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i, denied := range []bool{false, true, false} {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		sp.SetStartTimestamp(pcommon.Timestamp(i))
		sp.Attributes().PutInt("gen_ai.usage.input_tokens", 10)
		if denied {
			sp.Attributes().PutStr(predicate.DecisionAttribute, "deny")
		}
	}
	src := meterSource(t, map[string]any{"name": "meter", "budget": map[string]any{"sum": "input_tokens", "max": 20}})
	latch := src.NewLatch()
	if evs, _ := src.Extract(td, &latch); len(evs) != 0 {
		t.Errorf("20 tokens crossed a budget of 20: %d events", len(evs))
	}
}

// A trajectory predicate compares a group's calls with a recorded good
// run's: the run itself completes it and never deviates; a run that
// transfers elsewhere deviates at that call, in strict mode at the call,
// in unordered mode (tools only) at the call the reference has no more of;
// a deviation also means the reference is never completed.
func TestTrajectory(t *testing.T) {
	ref := filepath.Join(fixtures.Dir(), "adk-js", "strong-run-01.json")
	traj := func(name string, spec map[string]any) map[string]any {
		spec["reference"] = ref
		return map[string]any{"name": name, "trajectory": spec}
	}
	src := meterSource(t,
		traj("off", map[string]any{}),
		traj("done", map[string]any{"at": "complete"}),
		traj("offTools", map[string]any{"mode": "unordered", "args": "ignore"}),
		traj("superDone", map[string]any{"mode": "superset", "at": "complete", "args": map[string]any{"agentName": "exact"}}),
		traj("offSubset", map[string]any{"mode": "subset"}),
	)
	for _, c := range []struct {
		file string
		want map[int][]int // predicate bit: the events where it holds
	}{
		{"adk-js/strong-run-01.json", map[int][]int{1: nil, 2: {4}, 3: nil, 4: {4}, 5: nil}},
		{"adk-js/weak-run-05.json", map[int][]int{1: {3}, 2: nil, 3: {4}, 4: {5}, 5: {3}}},
		{"adk-js/parallel-goodbye.json", map[int][]int{1: {1}, 2: nil, 3: {2}, 4: nil, 5: {1}}},
	} {
		evs := extract(t, src, c.file)
		for bit, want := range c.want {
			if got := heldAt(evs, bit); !slices.Equal(got, want) {
				t.Errorf("%s: %s held at %v, want %v", c.file, src.Names()[bit], got, want)
			}
		}
	}
}

func TestTrajectoryErrors(t *testing.T) {
	dir := t.TempDir()
	notOTLP := filepath.Join(dir, "labels.json")
	noCalls := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(notOTLP, []byte(`{"labels": [1, 2]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noCalls, []byte(`{"resourceSpans": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(fixtures.Dir(), "adk-js", "strong-run-01.json")
	for _, c := range []struct {
		spec map[string]any
		want string
	}{
		{map[string]any{"reference": filepath.Join(dir, "missing.json")}, "trajectory: reference: open"},
		{map[string]any{"reference": notOTLP}, "is not OTLP/JSON traces"},
		{map[string]any{"reference": noCalls}, "holds no tool call"},
		{map[string]any{"reference": ref, "mode": "subset", "at": "complete"}, "a subset run need not make any call"},
		{map[string]any{"reference": ref, "mode": "superset"}, "a superset run may make any other call"},
		{map[string]any{"reference": ref, "mode": "loose"}, `mode "loose": valid modes are strict, unordered, subset, superset`},
		{map[string]any{"reference": ref, "args": map[string]any{"city": "fuzzy"}}, `args: field "city": want exact or ignore`},
		{map[string]any{"mode": "strict"}, "reference is required"},
	} {
		var cfg predicate.Config
		err := confmap.NewFromStringMap(map[string]any{"predicates": []any{map[string]any{"name": "p", "trajectory": c.spec}}}).Unmarshal(&cfg)
		if err == nil {
			_, err = NewSource(cfg, sequence.ByTraceID, componenttest.NewNopTelemetrySettings())
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.spec, err, c.want)
		}
	}
}

// byTrace splits a file's spans into one Traces per trace, in order of
// their first span's start: a conversation's turns, as they come live.
func byTrace(td ptrace.Traces) []ptrace.Traces {
	var order []pcommon.TraceID
	parts := map[pcommon.TraceID]ptrace.Traces{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				part, ok := parts[sp.TraceID()]
				if !ok {
					part = ptrace.NewTraces()
					rs.Resource().CopyTo(part.ResourceSpans().AppendEmpty().Resource())
					part.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
					parts[sp.TraceID()] = part
					order = append(order, sp.TraceID())
				}
				sp.CopyTo(part.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty())
			}
		}
	}
	first := func(id pcommon.TraceID) pcommon.Timestamp {
		spans := parts[id].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		earliest := spans.At(0).StartTimestamp()
		for _, sp := range spans.All() {
			earliest = min(earliest, sp.StartTimestamp())
		}
		return earliest
	}
	slices.SortFunc(order, func(a, b pcommon.TraceID) int { return int(first(a)) - int(first(b)) })
	out := make([]ptrace.Traces, len(order))
	for i, id := range order {
		out[i] = parts[id]
	}
	return out
}

// A trajectory's progress is the group's: turn by turn, through a
// checkpoint between every two turns, the reference completes at its last
// call as it does read whole; a state that does not fit the reference is
// refused.
func TestTrajectoryAcrossTurnsAndCheckpoints(t *testing.T) {
	ref := filepath.Join(fixtures.Dir(), "adk-js", "strong-run-01.json")
	src := meterSource(t, map[string]any{"name": "done", "trajectory": map[string]any{"reference": ref, "at": "complete"}})
	turns := byTrace(fixtures.Traces(t, "adk-js/strong-run-01.json"))
	if len(turns) < 2 {
		t.Fatalf("%d turns", len(turns))
	}
	latch := src.NewLatch()
	var held []int
	events := 0
	for _, turn := range turns {
		restored := src.NewLatch()
		if err := restored.RestoreMeters(latch.AppendMeters(nil)); err != nil {
			t.Fatal(err)
		}
		latch = restored
		evs, _ := src.Extract(turn, &latch)
		for _, i := range heldAt(evs, 1) {
			held = append(held, events+i)
		}
		events += len(evs)
	}
	if !slices.Equal(held, []int{4}) {
		t.Errorf("turn by turn, the reference completed at %v, want [4]", held)
	}
	other := meterSource(t, map[string]any{"name": "done", "trajectory": map[string]any{
		"reference": filepath.Join(fixtures.Dir(), "adk-js", "parallel-goodbye.json"), "at": "complete"}})
	l := other.NewLatch()
	if err := l.RestoreMeters(latch.AppendMeters(nil)); err == nil || !strings.Contains(err.Error(), "does not fit a reference") {
		t.Errorf("the progress of a 4-call reference restored against a 2-call one: %v", err)
	}
}

// A flow holds at each call that carries a value an earlier call
// produced: a detected secret read from a file reaching an email's body,
// not the email that carries none, nor a secret the email itself made up;
// without a detector, any long enough string. The note names the secret's
// kind and length, never the secret.
func TestFlows(t *testing.T) {
	const key = "sk-EXAMPLEi1rLkgObmLmCqT3BlbkFJ6pxKDUzhmPl4Pzo08pfd"
	td := calls(
		[3]string{"send_email", `{"to":"a@example.com","body":"hello"}`, `{"sent":true}`},
		[3]string{"read_file", `{"path":"/etc/app.env"}`, `{"content":"OPENAI_API_KEY=` + key + `\nMODE=prod"}`},
		[3]string{"send_email", `{"to":"a@example.com","body":"weather is fine"}`, `{"sent":true}`},
		[3]string{"send_email", `{"to":"a@example.com","body":"the key: ` + key + `"}`, `{"sent":true}`},
		[3]string{"send_email", `{"to":"a@example.com","body":"MODE=prod again"}`, `{"sent":true}`},
	)
	for _, c := range []struct {
		name string
		flow map[string]any
		want []int
	}{
		{"a detected key", map[string]any{"from": "read_file.result", "to": "send_*.args", "detect": "any"}, []int{4}},
		{"an API key only", map[string]any{"from": "read_file.result", "to": "send_email.args", "detect": "api_key"}, []int{4}},
		{"any string of 8+", map[string]any{"from": "read_*.result", "to": "send_email.args"}, nil},
		{"any string of 9+, the whole content", map[string]any{"from": "read_file.result", "to": "send_email.args", "min_length": 9}, nil},
		{"emails only", map[string]any{"from": "read_file.result", "to": "send_email.args", "detect": "email"}, nil},
	} {
		src := meterSource(t, map[string]any{"name": "leak", "flows": c.flow})
		latch := src.NewLatch()
		evs, _ := src.Extract(td, &latch)
		if got := heldAt(evs, 1); !slices.Equal(got, c.want) {
			t.Errorf("%s: held at %v, want %v", c.name, got, c.want)
		}
		for _, ev := range evs {
			if note, ok := ev.Span.Attributes().Get(predicate.MeterNoteAttribute); ok && strings.Contains(note.Str(), key[:12]) {
				t.Errorf("%s: the note gives the secret away: %s", c.name, note.Str())
			}
		}
	}
	// The whole content (a string of 30+) reaching a later call is a flow
	// too, without a detector.
	src := meterSource(t, map[string]any{"name": "leak", "flows": map[string]any{"from": "read_file.result", "to": "send_email.args"}})
	latch := src.NewLatch()
	content := "OPENAI_API_KEY=" + key
	evs, _ := src.Extract(calls(
		[3]string{"read_file", `{"path":"x"}`, `{"content":"` + content + `"}`},
		[3]string{"send_email", `{"body":"fwd: ` + content + ` (see above)"}`, `{}`},
	), &latch)
	if got := heldAt(evs, 1); !slices.Equal(got, []int{2}) {
		t.Errorf("the content forwarded: held at %v, want [2]", got)
	}
}

// A model call and the tool call inside it start in the same millisecond
// (ADK with a fast model), the child exported first: the tie-break puts
// the parent first, and each span keeps its own reading. The budget holds
// at the model call, and the tool call stays the event it is.
func TestMeterReadingsSurviveTheTieBreak(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	tool := ss.Spans().AppendEmpty()
	tool.SetTraceID(pcommon.TraceID{1})
	tool.SetSpanID(pcommon.SpanID{0xb2})
	tool.SetParentSpanID(pcommon.SpanID{0xa1})
	tool.SetName("execute_tool get_weather")
	tool.SetStartTimestamp(1_000_000_000_000)
	tool.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	tool.Attributes().PutStr("gen_ai.tool.name", "get_weather")
	model := ss.Spans().AppendEmpty()
	model.SetTraceID(pcommon.TraceID{1})
	model.SetSpanID(pcommon.SpanID{0xa1})
	model.SetName("call_llm")
	model.SetStartTimestamp(1_000_000_000_000)
	model.Attributes().PutInt("gen_ai.usage.input_tokens", 30)
	for bound, want := range map[int][]string{10: {"call_llm 10", "execute_tool get_weather 01"}, 100: {"execute_tool get_weather 01"}} {
		src := meterSource(t, map[string]any{"name": "overTokens", "budget": map[string]any{"sum": "tokens", "max": bound}})
		latch := src.NewLatch()
		evs, _ := src.Extract(td, &latch)
		var got []string
		for _, ev := range evs {
			got = append(got, fmt.Sprintf("%s %02b", ev.Span.Name(), ev.Bits))
		}
		if !slices.Equal(got, want) {
			t.Errorf("max %d: events %q, want %q", bound, got, want)
		}
	}
}
