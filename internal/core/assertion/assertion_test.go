// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

var paperPredicates = []string{"xferToGreeting", "xferToWeather", "sayHello"}

const (
	xferToGreeting = 1 << iota
	xferToWeather
	sayHello
)

func te1(t *testing.T, onEnd string) []Compiled {
	t.Helper()
	c, err := Compile([]Config{{Name: "te1", Always: "xferToGreeting >> sayHello + xferToWeather", OnEnd: onEnd}}, paperPredicates, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// events makes one span per event in a fresh ptrace.Traces.
func events(names []string, bits ...uint64) []Event {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	var out []Event
	for i, b := range bits {
		sp := spans.AppendEmpty()
		sp.SetName(names[i])
		out = append(out, Event{Bits: b, Time: int64(i) * 1e9, Name: names[i], Span: sp})
	}
	return out
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Name: "te1", Always: "xferToGreeting >> (sayHello"}, `assertion "te1": always: "xferToGreeting >> (sayHello": col 28: expected ')'`},
		{Config{Name: "te2", Never: "sayGoodbye"}, `assertion "te2": never: "sayGoodbye": col 1: unknown predicate "sayGoodbye" (declared: xferToGreeting, xferToWeather, sayHello)`},
		{Config{Name: "te3", Never: "sayHelo"}, `assertion "te3": never: "sayHelo": col 1: unknown predicate "sayHelo" (declared: xferToGreeting, xferToWeather, sayHello); did you mean "sayHello"?`},
		{Config{Name: "te4", Pattern: map[string]any{"never": map[string]any{"x": "sayHelo"}}}, `assertion "te4": never: x: predicate "sayHelo" is not declared (declared: xferToGreeting, xferToWeather, sayHello); did you mean "sayHello"?`},
		{Config{Name: "te3"}, `assertion "te3": give exactly one of always, never, initially or a pattern (requires, before, never, never_after, response, max_calls, max_consecutive, first, handoff_returns), got none`},
		{Config{Name: "te4", Always: "sayHello", Never: "sayHello"}, `assertion "te4": give exactly one of always, never, initially or a pattern (requires, before, never, never_after, response, max_calls, max_consecutive, first, handoff_returns), got always and never`},
		{Config{Name: "te5", Always: "sayHello", OnEnd: "later"}, `assertion "te5": on_end: unknown end policy "later": valid values are "inconclusive", "fail" and "ignore"`},
		{Config{Always: "sayHello"}, `assertions[0]: name is required`},
	} {
		_, err := Compile([]Config{tc.cfg}, paperPredicates, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
	_, err := Compile([]Config{{Name: "a", Always: "ok"}, {Name: "a", Always: "ok"}}, nil, 0)
	if err == nil || !strings.Contains(err.Error(), `assertion "a": declared twice`) {
		t.Errorf("duplicate: %v", err)
	}
}

// The paper's failing run across two user turns of one conversation: turn 1
// transfers to greeting, says hello, transfers to greeting again; turn 2
// transfers to the weather agent.
func TestConversationAcrossTraces(t *testing.T) {
	r := NewRunner(te1(t, ""), Options{})
	names := []string{"execute_tool transfer_to_agent", "execute_tool say_hello", "execute_tool transfer_to_agent"}
	turn1 := events(names, xferToGreeting, sayHello, xferToGreeting)
	got := r.Run("conv-1", turn1, false)
	if len(got) != 1 || got[0].Start != 1 || got[0].End != 3 || !got[0].Violation || got[0].Span.Name() != names[2] {
		t.Fatalf("turn 1: %+v", got)
	}
	want := "te1: always xferToGreeting >> sayHello + xferToWeather: FAILURE from event 1 to 3\n" +
		"Expected xferToWeather at event 3; came execute_tool transfer_to_agent [xferToGreeting].\n" +
		">> (1/3) (0/2000) 0 {}\n  xferToGreeting (1/1) (0/0) 1 {}\n  + (2/3) (1000/2000) 0 {}\n" +
		"    sayHello (2/2) (1000/1000) 1 {}\n    xferToWeather (3/3) (2000/2000) 0 {}\n" +
		"events (cycle, ms since the first event, what it was [predicates that held]):\n" +
		"  1 +0ms execute_tool transfer_to_agent [xferToGreeting]\n" +
		"  2 +1000ms execute_tool say_hello [sayHello]\n  3 +2000ms execute_tool transfer_to_agent [xferToGreeting]\n"
	if got[0].Explanation != want {
		t.Errorf("explanation\n%s\nwant\n%s", got[0].Explanation, want)
	}
	// Turn 2: the evaluation started at event 3 fails at event 4.
	turn2 := events([]string{"execute_tool transfer_to_agent"}, xferToWeather)
	got = r.Run("conv-1", turn2, false)
	if len(got) != 1 || got[0].Start != 3 || got[0].End != 4 || !got[0].Attached {
		t.Fatalf("turn 2: %+v", got)
	}
	if r.Groups() != 1 || len(r.Finish("conv-1")) != 0 || r.Groups() != 0 {
		t.Fatal("group not finished cleanly")
	}
}

func TestEndOfGroup(t *testing.T) {
	// A transfer to greeting as the last event: te1 waits for more.
	r := NewRunner(te1(t, "fail"), Options{})
	evs := events([]string{"a", "b"}, sayHello, xferToGreeting)
	got := r.Run("trace-1", evs, true)
	if len(got) != 1 || got[0].Kind.String() != "FAILURE" || !got[0].Attached || got[0].Span.Name() != "b" {
		t.Fatalf("on_end fail: %+v", got)
	}
	if r.Groups() != 0 {
		t.Fatal("group left open")
	}
	// A conversation ended after its spans left: verdicts are unattached.
	r = NewRunner(te1(t, ""), Options{})
	r.Run("conv", evs, false)
	got = r.Finish("conv")
	if len(got) != 1 || got[0].Kind.String() != "PENDING" || got[0].Attached {
		t.Fatalf("finish: %+v", got)
	}
	Annotate(got[0]) // unattached: nothing to write, and no panic
}

func TestMaxEventsPerGroup(t *testing.T) {
	r := NewRunner(te1(t, ""), Options{MaxEventsPerGroup: 2})
	got := r.Run("g", events([]string{"a", "b", "c"}, xferToGreeting, sayHello, xferToWeather), false)
	// The sequence is cut after event 2: te1 started at 1 is pending there,
	// and event 3 begins a new sequence.
	if len(got) != 1 || got[0].Kind.String() != "PENDING" || got[0].Start != 1 || got[0].Span.Name() != "b" {
		t.Fatalf("got %+v", got)
	}
}

func TestAnnotate(t *testing.T) {
	r := NewRunner(te1(t, ""), Options{})
	evs := events([]string{"x", "h", "x"}, xferToGreeting, sayHello, xferToGreeting)
	vs := r.Run("trace-9", evs, true)
	for _, v := range vs {
		Annotate(v)
	}
	sp := evs[2].Span
	if v, ok := sp.Attributes().Get(verdictattr.Violation); !ok || !v.Bool() {
		t.Fatal("agentguard.violation not set")
	}
	// The failure of the evaluation started at 1, then the pending one
	// started at 3, at the end of the trace.
	if sp.Events().Len() != 2 {
		t.Fatalf("%d events", sp.Events().Len())
	}
	if v, _ := sp.Events().At(1).Attributes().Get(verdictattr.ScoreLabel); v.Str() != verdictattr.LabelInconclusive {
		t.Errorf("second event labelled %q", v.Str())
	}
	e := sp.Events().At(0)
	attrs := e.Attributes().AsRaw()
	for k, want := range map[string]any{
		verdictattr.EvaluationName: "te1", verdictattr.ScoreLabel: verdictattr.LabelFail, verdictattr.ScoreValue: 0.0, verdictattr.Check: verdictattr.CheckTemporal,
		verdictattr.Expression: "always: xferToGreeting >> sayHello + xferToWeather", verdictattr.Verdict: "failure",
		verdictattr.StartEvent: int64(1), verdictattr.EndEvent: int64(3), verdictattr.Group: "trace-9",
	} {
		if attrs[k] != want {
			t.Errorf("%s = %v, want %v", k, attrs[k], want)
		}
	}
	if len(attrs) > annotationAttributes {
		t.Errorf("%d attributes on the event: raise annotationAttributes, the capacity Annotate reserves", len(attrs))
	}
	if e.Name() != verdictattr.EvaluationEvent || !strings.Contains(attrs[verdictattr.Explanation].(string), "FAILURE from event 1 to 3") {
		t.Errorf("event %s: %v", e.Name(), attrs)
	}
	if evs[0].Span.Events().Len() != 0 || evs[1].Span.Events().Len() != 0 {
		t.Error("verdict written on the wrong span")
	}
}

func TestPassesAreReportedWhenAsked(t *testing.T) {
	r := NewRunner(te1(t, ""), Options{Passes: true})
	vs := r.Run("t", events([]string{"x", "h", "w"}, xferToGreeting, sayHello, xferToWeather), true)
	for _, v := range vs {
		Annotate(v)
	}
	var labels []string
	for _, v := range vs {
		label, _ := scoreOf(v)
		labels = append(labels, label)
	}
	if len(vs) != 3 || strings.Join(labels, ",") != "pass,pass,pass" {
		t.Fatalf("verdicts %v", labels)
	}
}

// Each explanation says in one sentence what was expected and what came
// instead (or that the group ended, or that a never-assertion happened).
func TestExplanationSentences(t *testing.T) {
	first := func(s string) string { return strings.SplitN(s, "\n", 3)[1] }

	// The greeting agent keeps control: the group ends waiting for the
	// transfer back.
	r := NewRunner(te1(t, "fail"), Options{})
	got := r.Run("g", events([]string{"transfer to greeting_agent", "tool say_hello"}, xferToGreeting, sayHello), true)
	if len(got) != 1 {
		t.Fatalf("verdicts %+v", got)
	}
	if s, want := first(got[0].Explanation), "Expected xferToWeather after event 2; the group ended instead."; s != want {
		t.Errorf("end failure: %q, want %q", s, want)
	}

	// Pending, with the default end policy (explained when reported: report all).
	r = NewRunner(te1(t, ""), Options{Passes: true})
	got = r.Run("g", events([]string{"transfer to greeting_agent"}, xferToGreeting), true)
	if len(got) != 1 || got[0].Kind.String() != "PENDING" {
		t.Fatalf("verdicts %+v", got)
	}
	if s, want := first(got[0].Explanation), "Still waiting for sayHello + xferToWeather when the group ended after event 1."; s != want {
		t.Errorf("pending: %q, want %q", s, want)
	}

	// never: the match is what must not happen.
	c, err := Compile([]Config{{Name: "noSelf", Never: "xferToGreeting + xferToGreeting"}}, paperPredicates, 0)
	if err != nil {
		t.Fatal(err)
	}
	got = NewRunner(c, Options{}).Run("g", events([]string{"transfer to greeting_agent", "transfer to greeting_agent"}, xferToGreeting, xferToGreeting), true)
	if len(got) == 0 || !got[0].Violation { // then the evaluation started at event 2, pending
		t.Fatalf("verdicts %+v", got)
	}
	if s, want := first(got[0].Explanation), "It must never happen, and it did: from event 1 (transfer to greeting_agent) to event 2 (transfer to greeting_agent)."; s != want {
		t.Errorf("never: %q, want %q", s, want)
	}
}
