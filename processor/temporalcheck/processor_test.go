// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// createProcessor builds the processor from a named testdata config, not
// started.
func createProcessor(t testing.TB, name string, edit func(*Config)) (*temporalProcessor, *consumertest.TracesSink) {
	t.Helper()
	cfg, err := loadConfig(t, name)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*temporalProcessor), sink
}

// newTestProcessor builds the processor from a named testdata config and
// starts it, on the real clock, without a warm-up unless edit sets one (the
// fixtures' traces started before the test; warm_up has its own tests).
func newTestProcessor(t testing.TB, name string, edit func(*Config)) (*temporalProcessor, *consumertest.TracesSink) {
	t.Helper()
	p, sink := createProcessor(t, name, func(c *Config) {
		c.WarmUp = new(time.Duration)
		if edit != nil {
			edit(c)
		}
	})
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return p, sink
}

// fakeClock is a time the test moves; the stage reads it from the test's
// goroutine only (no clock goroutine runs: the processor is not started).
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// newClockedProcessor is newTestProcessor without Start: time is the
// returned clock, and traces are released by p.Tick.
func newClockedProcessor(t *testing.T, name string, edit func(*Config)) (*temporalProcessor, *consumertest.TracesSink, *fakeClock) {
	t.Helper()
	p, sink := createProcessor(t, name, edit)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	p.UseClock(clock.now)
	return p, sink, clock
}

// verdictsOf lists the evaluation events on the spans the sink received, as
// "assertion verdict start/end on span-name", sorted.
func verdictsOf(sink *consumertest.TracesSink) []string {
	var out []string
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					for _, ev := range span.Events().All() {
						if ev.Name() != verdictattr.EvaluationEvent {
							continue
						}
						a := ev.Attributes().AsRaw()
						out = append(out, fmt.Sprintf("%s %s %d/%d on %s", a[verdictattr.EvaluationName], a[verdictattr.Verdict],
							a[verdictattr.StartEvent], a[verdictattr.EndEvent], span.Name()))
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func feed(t testing.TB, p *temporalProcessor, tds ...ptrace.Traces) int {
	n := 0
	for _, td := range tds {
		n += td.SpanCount()
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func shutdown(t *testing.T, p *temporalProcessor) {
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestPaperRunsPerTrace(t *testing.T) {
	p, sink := newTestProcessor(t, "paper", nil)
	n := feed(t, p, fixtures.Traces(t, "adk-weather/adk-good-42-0.json"), fixtures.Traces(t, "adk-weather/adk-good-42-1.json"))
	shutdown(t, p)
	if got := verdictsOf(sink); len(got) != 0 || sink.SpanCount() != n {
		t.Fatalf("good run: verdicts %v, %d of %d spans", got, sink.SpanCount(), n)
	}

	p, sink = newTestProcessor(t, "paper", nil)
	n = feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"), fixtures.Traces(t, "adk-weather/adk-bad-43-1.json"))
	shutdown(t, p)
	want := []string{"te1 failure 1/3 on execute_tool transfer_to_agent"}
	if got := verdictsOf(sink); !slices.Equal(got, want) || sink.SpanCount() != n {
		t.Fatalf("bad run: verdicts %v, want %v; %d of %d spans", got, want, sink.SpanCount(), n)
	}
}

func TestMapFormConfigRuns(t *testing.T) {
	p, sink := newTestProcessor(t, "mapform", nil)
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"))
	shutdown(t, p)
	if got := verdictsOf(sink); !slices.Equal(got, []string{"te1 failure 1/3 on execute_tool transfer_to_agent"}) {
		t.Fatalf("verdicts %v", got)
	}
}

// With the conversation as the group, the paper's failing run also fails
// from event 3 (turn 1) to event 4 (turn 2).
func TestPaperConversation(t *testing.T) {
	p, sink := newTestProcessor(t, "paper", func(c *Config) { c.GroupBy = "gen_ai.conversation.id" })
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"), fixtures.Traces(t, "adk-weather/adk-bad-43-1.json"))
	shutdown(t, p)
	want := []string{"te1 failure 1/3 on execute_tool transfer_to_agent", "te1 failure 3/4 on execute_tool transfer_to_agent"}
	if got := verdictsOf(sink); !slices.Equal(got, want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	violating := 0
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					if v, ok := span.Attributes().Get(verdictattr.Violation); ok && v.Bool() {
						violating++
					}
				}
			}
		}
	}
	if violating != 2 {
		t.Errorf("%d spans marked agentguard.violation, want 2", violating)
	}
}

// The real ADK for TypeScript traces: agentName in the tool args.
func TestADKTypeScript(t *testing.T) {
	for file, want := range map[string][]string{
		"adk-js/strong-run-01.json": nil,
		"adk-js/weak-run-05.json":   {"te1 failure 1/3 on execute_tool transfer_to_agent", "te1 failure 3/4 on execute_tool transfer_to_agent"},
	} {
		p, sink := newTestProcessor(t, "paper", func(c *Config) { c.GroupBy = "gen_ai.conversation.id" })
		feed(t, p, fixtures.Traces(t, file))
		shutdown(t, p)
		if got := verdictsOf(sink); !slices.Equal(got, want) {
			t.Errorf("%s: verdicts %v, want %v", file, got, want)
		}
	}
}

// splitSpans cuts a trace file into batches of random sizes in random order.
func splitSpans(r *rand.Rand, td ptrace.Traces) []ptrace.Traces {
	type loc struct{ rs, ss, sp int }
	var all []loc
	for i, rs := range td.ResourceSpans().All() {
		for j, ss := range rs.ScopeSpans().All() {
			for k := range ss.Spans().Len() {
				all = append(all, loc{i, j, k})
			}
		}
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var out []ptrace.Traces
	for len(all) > 0 {
		n := 1 + r.IntN(len(all))
		b := ptrace.NewTraces()
		for _, l := range all[:n] {
			rs := td.ResourceSpans().At(l.rs)
			ss := rs.ScopeSpans().At(l.ss)
			drs := b.ResourceSpans().AppendEmpty()
			rs.Resource().CopyTo(drs.Resource())
			dss := drs.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(dss.Scope())
			ss.Spans().At(l.sp).CopyTo(dss.Spans().AppendEmpty())
		}
		out = append(out, b)
		all = all[n:]
	}
	return out
}

// Any split of the spans into batches, in any order, gives the same verdicts
// on the same spans, and every span comes out.
func TestBatchingDoesNotMatter(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	want := []string{"te1 failure 1/3 on execute_tool transfer_to_agent", "te1 failure 3/4 on execute_tool transfer_to_agent"}
	for i := range 30 {
		workers := 1 + i%3 // the stage's shards and workers must not change a verdict
		p, sink := newTestProcessor(t, "paper", func(c *Config) { c.GroupBy, c.Workers = "gen_ai.conversation.id", workers })
		n := 0
		for _, file := range []string{"adk-weather/adk-bad-43-0.json", "adk-weather/adk-bad-43-1.json"} {
			n += feed(t, p, splitSpans(r, fixtures.Traces(t, file))...)
		}
		shutdown(t, p)
		if got := verdictsOf(sink); !slices.Equal(got, want) || sink.SpanCount() != n {
			t.Fatalf("verdicts %v; %d of %d spans", got, sink.SpanCount(), n)
		}
	}
}

// Late spans of a trace already judged alone take up its group where it
// ended, on its worker, and are passed on from there; none is held.
func TestLateSpansAreJudgedAndPassedOn(t *testing.T) {
	p, sink, clock := newClockedProcessor(t, "paper", nil)
	batches := splitSpans(rand.New(rand.NewPCG(1, 1)), fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"))
	first, rest := batches[0], batches[1:]
	n := feed(t, p, first)
	clock.t = clock.t.Add(time.Minute)
	p.Tick(clock.t)
	if sink.SpanCount() != n {
		t.Fatalf("after wait: %d of %d spans released", sink.SpanCount(), n)
	}
	n += feed(t, p, rest...)
	p.Sync()
	if sink.SpanCount() != n || p.Held() != 0 {
		t.Fatalf("late spans held: %d of %d out, %d traces held", sink.SpanCount(), n, p.Held())
	}
	shutdown(t, p)
}

// At shutdown a conversation ends with its last trace still in hand: an
// on_end fail verdict goes on that trace's last event.
func TestShutdownAttachesEndOfGroupVerdicts(t *testing.T) {
	p, sink := newTestProcessor(t, "paper", func(c *Config) {
		c.GroupBy = "gen_ai.conversation.id"
		c.Assertions = []assertion.Config{{Name: "answered", Always: "xferToWeather >> getWeather + ok", OnEnd: "fail"}}
	})
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-good-42-0.json"), fixtures.Traces(t, "adk-weather/adk-good-42-1.json"))
	shutdown(t, p)
	// get_weather is the conversation's last event: "+ ok" waits for one more.
	want := []string{"answered failure 3/4 on execute_tool get_weather"}
	if got := verdictsOf(sink); !slices.Equal(got, want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
}

func TestMaxTracesReleasesTheOldestEarly(t *testing.T) {
	p, sink := newTestProcessor(t, "paper", func(c *Config) { c.MaxTraces, c.Workers = 1, 1 })
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"))
	p.Sync()
	if sink.SpanCount() != 0 {
		t.Fatal("released before the bound was reached")
	}
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-good-42-0.json"))
	p.Sync()
	if got := verdictsOf(sink); len(got) != 1 || !strings.HasPrefix(got[0], "te1 failure 1/3") {
		t.Fatalf("evicted trace's verdicts %v", got)
	}
	shutdown(t, p)
}

func TestBadOTTLFailsCreation(t *testing.T) {
	cfg, err := loadConfig(t, "paper")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Predicates[0].TransferTo = ""
	cfg.Predicates[0].Condition = `span.attributes["x"] ==`
	_, err = NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.TracesSink))
	if err == nil || !strings.Contains(err.Error(), "xferToGreeting") {
		t.Fatalf("error %v, want one naming the predicate", err)
	}
}

// Spans that come after their trace was released (wait too short for the
// exporter's gaps) continue their conversation, judged as they come: the
// verdicts are those of the whole conversation judged at once, not lost to
// a pass-through. Every span carries the conversation's ID, as OpenInference
// sets session.id on each (a trace released before any of its spans named
// its conversation is a group of its own; ADK names it on its last spans).
func TestLateSpansContinueTheirConversation(t *testing.T) {
	conversation := func(c *Config) { c.GroupBy = "gen_ai.conversation.id" }
	files := []string{"adk-weather/adk-bad-43-0.json", "adk-weather/adk-bad-43-1.json"}
	ref, refSink := newTestProcessor(t, "paper", conversation)
	for _, file := range files {
		feed(t, ref, fixtures.Traces(t, file))
	}
	shutdown(t, ref)
	want := verdictsOf(refSink)
	if len(want) == 0 {
		t.Fatal("no verdict on the whole conversation: the test shows nothing")
	}

	p, sink, clock := newClockedProcessor(t, "paper", func(c *Config) { conversation(c); c.WarmUp = new(time.Duration) })
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, file := range files {
		for _, span := range inEndOrder(oneSpanBatches(stampConversation(fixtures.Traces(t, file), "conv-43"))) {
			n += feed(t, p, span)
			clock.t = clock.t.Add(time.Minute)
			p.Tick(clock.t) // past wait: every later span of the trace is late
		}
	}
	shutdown(t, p)
	if got := verdictsOf(sink); !slices.Equal(got, want) {
		t.Errorf("span by span, each late: verdicts %v, want %v (the conversation at once)", got, want)
	}
	if sink.SpanCount() != n {
		t.Errorf("%d of %d spans passed on", sink.SpanCount(), n)
	}
}

// stampConversation sets gen_ai.conversation.id on every span of td.
func stampConversation(td ptrace.Traces, id string) ptrace.Traces {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				sp.Attributes().PutStr("gen_ai.conversation.id", id)
			}
		}
	}
	return td
}

// inEndOrder sorts one-span batches by end time: the order an SDK's batch
// span processor exports them in.
func inEndOrder(batches []ptrace.Traces) []ptrace.Traces {
	end := func(td ptrace.Traces) pcommon.Timestamp {
		return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).EndTimestamp()
	}
	slices.SortStableFunc(batches, func(a, b ptrace.Traces) int { return cmp.Compare(end(a), end(b)) })
	return batches
}
