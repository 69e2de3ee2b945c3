// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/extension/riskendpoint/riskendpointtest"
	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// asker is the conversation configuration (greeted: every transfer to the
// greeting agent is followed by a hello) answering decisions, started on a
// clock the test moves.
func asker(t testing.TB, enforce string) (*temporalProcessor, *lockedClock, string) {
	t.Helper()
	ext, url := riskendpointtest.Start(t)
	id := component.MustNewID("riskendpoint")
	p, _ := createProcessor(t, "conversation", func(c *Config) {
		c.RiskEndpoint = &id
		c.Assertions[0].Enforce = enforce
		c.WarmUp = new(time.Duration)
	})
	clock := &lockedClock{t: fixtures.StoveEpoch.Add(time.Hour)}
	p.UseClock(clock.now)
	if err := p.Start(context.Background(), riskendpointtest.Host{id: ext}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p, clock, url
}

// askerWith is the conversation configuration with one more predicate and
// an assertion over it, judged as judge says (empty: the default), answering
// decisions, started on a clock the test moves.
func askerWith(t *testing.T, judge Judge, pred predicate.Named, a assertion.Config) (*temporalProcessor, *consumertest.TracesSink, *lockedClock, string) {
	t.Helper()
	ext, url := riskendpointtest.Start(t)
	id := component.MustNewID("riskendpoint")
	p, sink := createProcessor(t, "conversation", func(c *Config) {
		c.RiskEndpoint = &id
		if judge != "" {
			c.Judge = judge
		}
		c.WarmUp = new(time.Duration)
		c.Predicates = append(c.Predicates, pred)
		c.Assertions = append(c.Assertions, a)
	})
	clock := &lockedClock{t: fixtures.StoveEpoch.Add(time.Hour)}
	p.UseClock(clock.now)
	if err := p.Start(context.Background(), riskendpointtest.Host{id: ext}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p, sink, clock, url
}

// ask posts a question; it reports a failure with t.Errorf, so that a
// test may ask from another goroutine.
func ask(t *testing.T, url, group, body string) riskendpoint.DecisionResponse {
	t.Helper()
	var d riskendpoint.DecisionResponse
	resp, err := http.Post(url+"/v1/groups/"+group+"/decisions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return d
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("%s: %d, %v", body, resp.StatusCode, err)
	}
	return d
}

// After a transfer to the greeting agent, greeted expects a hello: asking
// for anything else is denied (with enforce: deny) with the explanation the
// violation would carry; asking for the hello is allowed.
func TestDecisionDeniesWhatWouldViolate(t *testing.T) {
	p, clock, url := asker(t, "deny")
	feed(t, p, fixtures.StoveTrace(0, "c1", fixtures.ToolCall{Tool: "transfer_to_greeting_agent"}))
	p.Tick(clock.add(time.Minute))

	d := ask(t, url, "c1", `{"action": {"tool": "get_weather", "arguments": {"city": "Paris"}}}`)
	if d.Decision != riskendpoint.Deny || len(d.Reasons) != 1 || d.Reasons[0].Assertion != "greeted" || d.Event != 2 ||
		!strings.Contains(d.Reasons[0].Explanation, "greeted: always xferToGreeting >> sayHello") || d.Group == nil {
		t.Errorf("get_weather after the transfer: %+v", d)
	}
	if d := ask(t, url, "c1", `{"action": {"tool": "say_hello"}}`); d.Decision != riskendpoint.Allow || len(d.Reasons) != 0 ||
		!slices.Equal(d.Matched, []string{"sayHello"}) {
		t.Errorf("say_hello after the transfer: %+v", d)
	}
	if d := ask(t, url, "c9", `{"action": {"tool": "get_weather"}}`); d.Decision != riskendpoint.Allow || d.Group != nil {
		t.Errorf("a conversation never seen: %+v", d)
	}
}

// enforce: warn (the default) warns instead, and off keeps the assertion
// out of decisions.
func TestDecisionEnforce(t *testing.T) {
	for enforce, want := range map[string]string{"": riskendpoint.Warn, "warn": riskendpoint.Warn, "off": riskendpoint.Allow} {
		p, clock, url := asker(t, enforce)
		feed(t, p, fixtures.StoveTrace(0, "c1", fixtures.ToolCall{Tool: "transfer_to_greeting_agent"}))
		p.Tick(clock.add(time.Minute))
		if d := ask(t, url, "c1", `{"action": {"tool": "get_weather"}}`); d.Decision != want {
			t.Errorf("enforce %q: %+v, want %s", enforce, d, want)
		}
	}
}

// Questions change nothing: a conversation judged with 1000 questions
// between its turns has the verdicts it has without them.
func TestQuestionsChangeNoVerdict(t *testing.T) {
	turns := [][]fixtures.ToolCall{
		{{Tool: "transfer_to_greeting_agent"}}, {{Tool: "say_hello"}}, {{Tool: "transfer_to_greeting_agent"}},
		{{Tool: "get_weather"}}, {{Tool: "transfer_to_greeting_agent"}, {Tool: "say_hello"}},
	}
	run := func(questions int) []string {
		p, sink, _ := newClockedProcessor(t, "conversation", nil)
		clock := &lockedClock{t: time.Unix(1_800_000_000, 0)} // the stage's ticker reads it while the test moves it
		p.UseClock(clock.now)
		if questions > 0 {
			id := component.MustNewID("riskendpoint")
			p.c.cfg.RiskEndpoint = &id
			ext, _ := riskendpointtest.Start(t)
			if err := p.Start(context.Background(), riskendpointtest.Host{id: ext}); err != nil {
				t.Fatal(err)
			}
		}
		for i, calls := range turns {
			feed(t, p, fixtures.StoveTrace(i, "c1", calls...))
			p.Tick(clock.add(time.Minute))
			for range questions {
				if _, err := p.Decide(context.Background(), riskendpoint.Question{Group: "c1", Action: fixtures.StoveTrace(99, "c1", fixtures.ToolCall{Tool: "say_goodbye"})}); err != nil {
					t.Fatal(err)
				}
			}
		}
		shutdown(t, p)
		return verdictsOf(sink)
	}
	without, with := run(0), run(1000)
	if !slices.Equal(without, with) || len(without) == 0 {
		t.Errorf("verdicts without questions %v, with %v", without, with)
	}
}

// Asked after a span, the answer waits until that span is judged: judged on
// arrival, a transfer the agent flushed just after asking is in the answer;
// a span that never comes makes the answer stale after max_wait.
func TestDecisionWaitsForTheSpanAskedAfter(t *testing.T) {
	ext, url := riskendpointtest.Start(t)
	id := component.MustNewID("riskendpoint")
	p, _ := createProcessor(t, "conversation", func(c *Config) {
		c.RiskEndpoint, c.Judge = &id, JudgeOnArrival
		c.Assertions[0].Enforce = "deny"
		c.WarmUp = new(time.Duration)
	})
	if err := p.Start(context.Background(), riskendpointtest.Host{id: ext}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })

	td := fixtures.StoveTrace(0, "c1", fixtures.ToolCall{Tool: "transfer_to_greeting_agent"})
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	last := spans.At(spans.Len() - 1).SpanID().String()
	answered := make(chan riskendpoint.DecisionResponse, 1)
	go func() {
		answered <- ask(t, url, "c1", `{"action": {"tool": "get_weather"}, "after_span_id": "`+last+`"}`)
	}()
	time.Sleep(20 * time.Millisecond) // the question waits for the span
	feed(t, p, td)
	if d := <-answered; d.Decision != riskendpoint.Deny || d.Stale {
		t.Errorf("asked after the transfer, sent after the question: %+v", d)
	}
	if d := ask(t, url, "c1", `{"action": {"tool": "get_weather"}, "after_span_id": "00000000000000aa"}`); !d.Stale || d.Decision != riskendpoint.Allow {
		t.Errorf("asked after a span never sent: %+v", d)
	}
}

// A question while its group ends, while the collector shuts down, or
// right after a restart from a checkpoint gets a clear answer: the group's,
// or "not held" (group null, on_unknown), or stale; never an error status,
// never a hang, and the verdicts are those without questions.
func TestQuestionsAtTheEdges(t *testing.T) {
	storageID := component.MustNewIDWithName("file_storage", "x")
	store := checkpointtest.NewStore()
	ext, url := riskendpointtest.Start(t)
	id := component.MustNewID("riskendpoint")
	host := hostWith{riskendpointtest.Host{id: ext}, store.Host(storageID)}
	start := func() (*temporalProcessor, *lockedClock) {
		p, _ := createProcessor(t, "conversation", func(c *Config) {
			c.RiskEndpoint, c.Storage = &id, &storageID
			c.Assertions[0].Enforce = "deny"
		})
		clock := &lockedClock{t: fixtures.StoveEpoch.Add(time.Hour)}
		p.UseClock(clock.now)
		if err := p.Start(context.Background(), host); err != nil {
			t.Fatal(err)
		}
		return p, clock
	}
	const deniedAfterTransfer = `{"action": {"tool": "get_weather"}}`
	p, clock := start()
	feed(t, p, fixtures.StoveTrace(0, "edge", fixtures.ToolCall{Tool: "transfer_to_greeting_agent"}))
	p.Tick(clock.add(time.Minute))

	// While the collector shuts down (its checkpoint written), questions
	// keep coming: each gets a decision (the last ones stale or not held),
	// or, once the processor has left the endpoint, 503 saying no processor
	// answers (the hook's no-answer policy applies).
	stop := make(chan struct{})
	answered := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				answered <- n
				return
			default:
				if status, body := askRaw(t, url, "edge", deniedAfterTransfer); status != http.StatusOK &&
					(status != http.StatusServiceUnavailable || !strings.Contains(body, "no processor answers decisions")) {
					t.Errorf("a question during shutdown: %d %s", status, body)
				}
				n++
			}
		}
	}()
	time.Sleep(10 * time.Millisecond)
	shutdown(t, p)
	close(stop)
	t.Logf("%d questions answered around the shutdown", <-answered)

	// Right after the restart the conversation is back: the same question
	// is denied again, on the restored state.
	p, clock = start()
	if d := ask(t, url, "edge", deniedAfterTransfer); d.Decision != riskendpoint.Deny || d.Group == nil {
		t.Errorf("after the restart: %+v", d)
	}

	// While the group ends (idle past group_timeout) and after, while it is
	// kept for its next turn to take up (retention): the group's answer;
	// once forgotten, not held.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			if d := ask(t, url, "edge", deniedAfterTransfer); d.Decision != riskendpoint.Deny && d.Group != nil {
				t.Errorf("while the group ends: %+v", d)
			}
		}
	}()
	p.Tick(clock.add(time.Hour))
	<-done
	if d := ask(t, url, "edge", deniedAfterTransfer); d.Group == nil || d.Decision != riskendpoint.Deny {
		t.Errorf("after the group ended, kept: %+v, want its answer (deny)", d)
	}
	p.Tick(clock.add(2 * time.Hour)) // past the retention
	if d := ask(t, url, "edge", deniedAfterTransfer); d.Group != nil || d.Decision != riskendpoint.Allow {
		t.Errorf("after the retention: %+v, want not held (allow)", d)
	}
	shutdown(t, p)
}

// askRaw posts a question and returns the status and body as they came.
func askRaw(t *testing.T, url, group, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/groups/"+group+"/decisions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// hostWith is a host running the extensions of several hosts.
type hostWith []component.Host

func (h hostWith) GetExtensions() map[component.ID]component.Component {
	out := map[component.ID]component.Component{}
	for _, one := range h {
		maps.Copy(out, one.GetExtensions())
	}
	return out
}

// A meter answers decisions as it judges: with a repeat bound, the call
// that would repeat is denied, a copy of the group's window deciding, so
// that asking twice, or asking anything, leaves the window as it was.
func TestDecisionDeniesARepeat(t *testing.T) {
	again := predicate.Named{Name: "again", Predicate: predicate.Predicate{Repeats: &predicate.Repeats{Key: []string{"tool"}, N: 2, Within: 5}}}
	p, _, clock, url := askerWith(t, "", again, assertion.Config{Name: "no_repeat", Never: "again", Enforce: "deny"})
	feed(t, p, fixtures.StoveTrace(0, "c1", fixtures.ToolCall{Tool: "get_weather"}))
	p.Tick(clock.add(time.Minute))

	for range 2 {
		d := ask(t, url, "c1", `{"action": {"tool": "get_weather"}}`)
		if d.Decision != riskendpoint.Deny || len(d.Reasons) != 1 || d.Reasons[0].Assertion != "no_repeat" ||
			!strings.Contains(d.Reasons[0].Explanation, "tool get_weather called 2 times in the last 5 tool calls") {
			t.Errorf("a second get_weather: %+v", d)
		}
	}
	if d := ask(t, url, "c1", `{"action": {"tool": "say_hello"}}`); d.Decision != riskendpoint.Allow {
		t.Errorf("say_hello: %+v", d)
	}
}

// A flow answers decisions too: once read_file returned a key, the email
// that would carry it is denied, one that does not is allowed.
func TestDecisionDeniesALeak(t *testing.T) {
	const key = "sk-EXAMPLEi1rLkgObmLmCqT3BlbkFJ6pxKDUzhmPl4Pzo08pfd"
	leak := predicate.Named{Name: "leak", Predicate: predicate.Predicate{Flows: &predicate.Flow{From: "read_file.result", To: "send_*.args", Detect: "api_key", MinLength: 8}}}
	p, _, clock, url := askerWith(t, "", leak, assertion.Config{Name: "no_leak", Never: "leak", Enforce: "deny"})
	td := fixtures.StoveTrace(0, "c1", fixtures.ToolCall{Tool: "read_file"})
	read := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	read.Attributes().PutStr("gcp.vertex.agent.tool_response", `{"content":"OPENAI_API_KEY=`+key+`"}`)
	feed(t, p, td)
	p.Tick(clock.add(time.Minute))

	d := ask(t, url, "c1", `{"action": {"tool": "send_email", "arguments": {"to": "a@example.com", "body": "the key is `+key+`"}}}`)
	if d.Decision != riskendpoint.Deny || len(d.Reasons) != 1 || d.Reasons[0].Assertion != "no_leak" ||
		strings.Contains(d.Reasons[0].Explanation, key) {
		t.Errorf("an email carrying the key read: %+v", d)
	}
	if d := ask(t, url, "c1", `{"action": {"tool": "send_email", "arguments": {"body": "all is well"}}}`); d.Decision != riskendpoint.Allow {
		t.Errorf("an email without it: %+v", d)
	}
}

// neverDropTable is a tool a conversation must never call, and the
// assertion that denies it.
func neverDropTable() (predicate.Named, assertion.Config) {
	return predicate.Named{Name: "dropTable", Predicate: predicate.Predicate{Tool: "drop_table"}},
		assertion.Config{Name: "no_drop", Never: "dropTable", Enforce: "deny"}
}

// Judged on arrival, a conversation no processor holds yet is answered as
// the collector will judge the action: the first event of a new group. Its
// first call of a tool it must never call is denied, whatever on_unknown
// says (allow here), and the same span, once it comes, is reported as a
// violation; a harmless first call is allowed, decided by on_unknown. Judged
// when complete, a trace of it may be held, not yet judged, before the
// action: on_unknown decides (TestDecisionDeniesWhatWouldViolate's c9).
func TestDecisionOnTheFirstActionOfANewConversation(t *testing.T) {
	pred, never := neverDropTable()
	p, sink, clock, url := askerWith(t, JudgeOnArrival, pred, never)

	d := ask(t, url, "fresh", `{"action": {"tool": "drop_table"}}`)
	if d.Decision != riskendpoint.Deny || d.Group != nil || !slices.ContainsFunc(d.Reasons, func(r riskendpoint.Reason) bool { return r.Assertion == "no_drop" }) {
		t.Errorf("drop_table as a new conversation's first call: %+v, want denied by no_drop", d)
	}
	if d := ask(t, url, "fresh", `{"action": {"tool": "get_weather"}}`); d.Decision != riskendpoint.Allow || d.Group != nil {
		t.Errorf("get_weather as a new conversation's first call: %+v", d)
	}
	feed(t, p, fixtures.StoveTrace(0, "fresh", fixtures.ToolCall{Tool: "drop_table"}))
	p.Tick(clock.add(time.Minute))
	if got := failures(sink); !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, "no_drop ") }) {
		t.Errorf("the collector's verdicts on the same call %q: want no_drop violated, as answered", got)
	}
}

// The processor registers with the endpoint only once its stage started,
// its checkpoint restored: a question (or a peer's hand-over) that came
// during the restore found the groups not yet back, and raced with it.
func TestRegistersOnceItsGroupsAreBack(t *testing.T) {
	storageID := component.MustNewIDWithName("file_storage", "x")
	store := checkpointtest.NewStore()
	id := component.MustNewID("riskendpoint")
	create := func() *temporalProcessor {
		p, _ := createProcessor(t, "conversation", func(c *Config) { c.RiskEndpoint, c.Storage = &id, &storageID })
		p.UseClock((&lockedClock{t: fixtures.StoveEpoch.Add(time.Hour)}).now)
		return p
	}
	ext, _ := riskendpointtest.Start(t)
	p := create()
	if err := p.Start(context.Background(), hostWith{riskendpointtest.Host{id: ext}, store.Host(storageID)}); err != nil {
		t.Fatal(err)
	}
	feed(t, p, fixtures.StoveTrace(0, "back", fixtures.ToolCall{Tool: "transfer_to_greeting_agent"}))
	shutdown(t, p) // checkpointed, not ended

	p = create()
	reg := &recordingRegistry{open: -1}
	reg.registered = func() { reg.open = p.OpenGroups() }
	if err := p.Start(context.Background(), hostWith{riskendpointtest.Host{id: reg}, store.Host(storageID)}); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, p)
	if reg.open != 1 {
		t.Errorf("registered with %d groups open, want the restored one (-1: never registered)", reg.open)
	}
}

// recordingRegistry is a risk endpoint that only calls registered when a
// processor registers.
type recordingRegistry struct {
	component.StartFunc
	component.ShutdownFunc
	open       int
	registered func()
}

func (r *recordingRegistry) Register(string, riskendpoint.Decider) func() {
	r.registered()
	return func() {}
}

// A tier hands conversations over between members in their saved form,
// which cannot carry capture bindings: with a risk endpoint that has peers,
// an assertion over capture predicates is refused at start, with the reason.
func TestCaptureAssertionsAreRefusedInATier(t *testing.T) {
	conf := selfHandoffConf()
	conf["risk_endpoint"] = "riskendpoint"
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := confmap.NewFromStringMap(conf).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	host := riskendpointtest.Host{component.MustNewID("riskendpoint"): &tierRegistry{}}
	err = p.Start(context.Background(), host)
	if err == nil {
		_ = p.Shutdown(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), "peers") || !strings.Contains(err.Error(), "no_self_handoff") {
		t.Fatalf("a capture assertion in a tier: %v", err)
	}
}

// tierRegistry is a risk endpoint with peers that no processor may join.
type tierRegistry struct {
	component.StartFunc
	component.ShutdownFunc
}

func (*tierRegistry) Register(string, riskendpoint.Decider) func() { return func() {} }
func (*tierRegistry) InTier() bool                                 { return true }
func (*tierRegistry) TakeOver(context.Context, string, string, string) ([]byte, bool, error) {
	return nil, false, nil
}

// Judged when complete, a group not open is decided by on_unknown alone: a
// trace of it may be held, not yet judged, that comes before the action.
func TestDecisionOnAGroupNotOpenWhenComplete(t *testing.T) {
	pred, never := neverDropTable()
	_, _, _, url := askerWith(t, JudgeWhenComplete, pred, never)
	d := ask(t, url, "fresh", `{"action": {"tool": "drop_table"}}`)
	if d.Decision != riskendpoint.Allow || d.Group != nil || d.Event != 0 || len(d.Reasons) != 1 || !strings.Contains(d.Reasons[0].Explanation, "on_unknown") {
		t.Errorf("drop_table for a group not open, judged when complete: %+v, want on_unknown (allow) alone", d)
	}
}
