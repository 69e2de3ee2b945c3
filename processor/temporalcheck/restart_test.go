// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/stage"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// lockedClock is a test's time, read by the stage's clock goroutine too.
type lockedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *lockedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *lockedClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// weatherConfig is the weather example's te3 over tool calls: back at the
// weather agent, it answers (get_weather) or hands on, at the next event.
func weatherConfig() *Config {
	cfg := createDefaultConfig()
	cfg.GroupBy = "conversation"
	cfg.Predicates = predicate.List{
		{Name: "xferToWeather", Predicate: predicate.Predicate{Tool: "transfer_to_weather"}},
		{Name: "getWeather", Predicate: predicate.Predicate{Tool: "get_weather"}},
		{Name: "xferToGreeting", Predicate: predicate.Predicate{Tool: "transfer_to_greeting"}},
	}
	cfg.Assertions = []assertion.Config{{Name: "te3", Always: "xferToWeather >> (getWeather | xferToGreeting)"}}
	cfg.Workers = 2
	return cfg
}

// weatherTurn is turn n of conversation conv: one tool call.
func weatherTurn(n int, conv, tool string) ptrace.Traces {
	return fixtures.StoveTrace(n, conv, fixtures.ToolCall{Tool: tool})
}

// A conversation: the weather agent is handed control (turn 3), answers
// (turn 4), and the user says goodbye (turn 5). In order, te3 holds.
var conversationTools = map[int]string{1: "transfer_to_greeting", 2: "say_hello", 3: "transfer_to_weather", 4: "get_weather", 5: "say_goodbye"}

// violations lists the te3 violations a sink received, as their deciding
// span's trace start order (the turn) and mark.
type violation struct {
	turn    int
	history string
}

func violationsOf(sink *consumertest.TracesSink) []violation {
	var out []violation
	eachFailure(sink, func(span ptrace.Span, a map[string]any) {
		h, _ := a[verdictattr.History].(string)
		turn := int(span.StartTimestamp().AsTime().Sub(fixtures.StoveEpoch) / time.Minute)
		out = append(out, violation{turn, h})
	})
	return out
}

// startProcessor creates and starts the processor on the test's clock.
func startProcessor(t *testing.T, cfg *Config, clock *lockedClock) (*temporalProcessor, *consumertest.TracesSink) {
	return startProcessorOn(t, cfg, clock, componenttest.NewNopHost())
}

// startProcessorOn is startProcessor on host.
func startProcessorOn(t *testing.T, cfg *Config, clock *lockedClock, host component.Host) (*temporalProcessor, *consumertest.TracesSink) {
	t.Helper()
	tp, sink := newClockedOn(t, cfg, clock)
	if err := tp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return tp, sink
}

// newClockedOn creates the processor on the test's clock, not started.
func newClockedOn(t *testing.T, cfg *Config, clock *lockedClock) (*temporalProcessor, *consumertest.TracesSink) {
	t.Helper()
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	tp := p.(*temporalProcessor)
	tp.UseClock(clock.now)
	return tp, sink
}

// playTurns plays turns of conversation conv, each released before the
// next arrives.
func playTurns(t *testing.T, p *temporalProcessor, clock *lockedClock, conv string, turns ...int) {
	t.Helper()
	for _, n := range turns {
		if err := p.ConsumeTraces(context.Background(), weatherTurn(n, conv, conversationTools[n])); err != nil {
			t.Fatal(err)
		}
		p.Tick(clock.add(15 * time.Second)) // past wait: released
	}
}

// A crash and restart in a routed tier: a backend judged turns 1-2 of a
// conversation and was killed; the restarted one gets the rest from the
// router's retry queue, turn 4 before turn 3. Judged as they come, te3 sees
// the transfer to the weather agent (turn 3) followed by the goodbye (turn
// 5): a violation that did not happen. It must not come unmarked: every
// verdict of the restarted backend on this conversation is marked, and
// the one in-order collector reports no violation at all.
func TestRestartOutOfOrderGivesNoUnmarkedFalseViolation(t *testing.T) {
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}

	reference, refSink := startProcessor(t, weatherConfig(), clock)
	playTurns(t, reference, clock, "c1", 1, 2, 3, 4, 5)
	shutdown(t, reference)
	if got := violationsOf(refSink); len(got) != 0 {
		t.Fatalf("in order, one collector: violations %v, want none", got)
	}

	crashed, _ := startProcessor(t, weatherConfig(), clock)
	playTurns(t, crashed, clock, "c1", 1, 2)
	// killed: nothing more of it is read (its Shutdown below only stops its
	// goroutines; its sink is not looked at).
	defer shutdown(t, crashed)

	// With warm_up set, the restarted backend marks the false violation
	// partial (the conversation was first seen in its warm-up); without
	// (storageless, nothing tells this start from a first one), the
	// out-of-order turn alone marks it.
	fiveMinutes := 5 * time.Minute
	for _, tt := range []struct {
		warmUp *time.Duration
		want   string
	}{{&fiveMinutes, verdictattr.HistoryPartial}, {nil, verdictattr.HistoryOutOfOrder}, {new(time.Duration), verdictattr.HistoryOutOfOrder}} {
		cfg := weatherConfig()
		cfg.WarmUp = tt.warmUp
		clock.add(10 * time.Second)
		restarted, sink := startProcessor(t, cfg, clock)
		playTurns(t, restarted, clock, "c1", 4, 3, 5)
		shutdown(t, restarted)
		got := violationsOf(sink)
		if len(got) == 0 {
			t.Fatal("no violation after the out-of-order redelivery: the scenario no longer tests the marking")
		}
		for _, v := range got {
			if v.history == "" {
				t.Errorf("unmarked violation at turn %d after the restart", v.turn)
			}
		}
		// te3 fails where the goodbye came instead of an answer.
		if want := []violation{{5, tt.want}}; !slices.Equal(got, want) {
			t.Errorf("violations after the restart %v, want %v", got, want)
		}
	}
}

// A user who pauses longer than group_timeout has not started a new
// conversation: within retention the next turn continues it, so that a
// violation across the pause is caught and an assertion needing an earlier
// event does not fire on a correct conversation. Past retention the
// conversation that comes back starts afresh, and every verdict on it is
// marked partial.
func TestAPauseLongerThanGroupTimeoutContinuesTheConversation(t *testing.T) {
	// pausedAfter plays the transfer to the weather agent in two
	// conversations, a pause of 10 minutes (twice group_timeout), then a
	// goodbye in "wrong" (te3 wants an answer) and the answer in "right"
	// (at 13 and 14 minutes: 12 after the first turn, 2 after the groups ended);
	// it returns the violations, as "assertion conversation-turn mark".
	pausedAfter := func(retention time.Duration) []string {
		c := weatherConfig()
		c.Retention = &retention
		c.Assertions = append(c.Assertions, assertion.Config{Name: "handedOver", Pattern: map[string]any{"requires": map[string]any{"x": "xferToWeather"}}})
		clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
		p, sink := startProcessor(t, c, clock)
		turn := func(n int, conv, tool string) {
			if err := p.ConsumeTraces(context.Background(), weatherTurn(n, conv, tool)); err != nil {
				t.Fatal(err)
			}
			p.Tick(clock.add(15 * time.Second))
		}
		turn(1, "wrong", "transfer_to_weather")
		turn(2, "right", "transfer_to_weather")
		p.Tick(clock.add(10 * time.Minute)) // both end idle
		p.Tick(clock.add(2 * time.Minute))  // kept, or forgotten, by now
		turn(13, "wrong", "say_goodbye")
		turn(14, "right", "get_weather")
		shutdown(t, p)
		return failures(sink)
	}
	if got, want := pausedAfter(time.Hour), []string{`te3 wrong-13 ""`}; !slices.Equal(got, want) {
		t.Errorf("within retention: %q, want %q (te3 across the pause, unmarked; requires holds on both)", got, want)
	}
	got := pausedAfter(time.Minute)
	if !slices.Contains(got, `handedOver right-end "partial"`) {
		t.Errorf("past retention: %q, want the returning conversations to fail requires, marked partial", got)
	}
	for _, v := range got {
		if !strings.HasSuffix(v, `"partial"`) {
			t.Errorf("past retention: %s: every violation on a conversation that came back must be marked partial", v)
		}
	}
}

// handedFrom is a tier of one other member, asked directly.
type handedFrom struct{ other *temporalProcessor }

func (h handedFrom) TakeOver(ctx context.Context, key, fingerprint string) ([]byte, bool, error) {
	return h.other.HandOver(ctx, key, fingerprint)
}

// A kept conversation a rescale moves to another member is taken up there
// after its end as it would be here: the new member does not report again
// what the end, at the old member, decided.
func TestAConversationHandedOverAfterItsEndDoesNotReportTheEndAgain(t *testing.T) {
	c := weatherConfig()
	c.Assertions[0].OnEnd = "fail"
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	old, oldSink := startProcessor(t, c, clock)
	moved, sink := newClockedOn(t, c, clock)
	moved.UseTier(handedFrom{old})
	if err := moved.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := old.ConsumeTraces(context.Background(), weatherTurn(1, "paused", "transfer_to_weather")); err != nil {
		t.Fatal(err)
	}
	old.Tick(clock.add(15 * time.Second))
	old.Tick(clock.add(10 * time.Minute)) // ends idle: te3 fails, kept
	if err := moved.ConsumeTraces(context.Background(), weatherTurn(13, "paused", "say_goodbye")); err != nil {
		t.Fatal(err)
	}
	moved.Tick(clock.add(15 * time.Second))
	shutdown(t, old)
	shutdown(t, moved)
	if got, want := failures(oldSink), []string{`te3 paused-end ""`}; !slices.Equal(got, want) {
		t.Errorf("the old member: %q, want %q", got, want)
	}
	if got := failures(sink); len(got) != 0 {
		t.Errorf("the new member reported %q: the end at the old member had reported te3", got)
	}
}

// A conversation taken up after its end (within retention) does not report
// again what its end decided: te3 (on_end: fail) failed at the end, and the
// goodbye after the pause, which fails the same evaluation, reports nothing;
// the transfer after it starts another, which the next end fails.
func TestAConversationTakenUpAfterItsEndDoesNotReportTheEndAgain(t *testing.T) {
	c := weatherConfig()
	c.Assertions[0].OnEnd = "fail"
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	p, sink := startProcessor(t, c, clock)
	turn := func(n int, tool string) {
		if err := p.ConsumeTraces(context.Background(), weatherTurn(n, "paused", tool)); err != nil {
			t.Fatal(err)
		}
		p.Tick(clock.add(15 * time.Second))
	}
	turn(1, "transfer_to_weather")
	p.Tick(clock.add(10 * time.Minute)) // ends idle: te3 fails, kept
	turn(13, "say_goodbye")
	turn(14, "transfer_to_weather")
	p.Tick(clock.add(10 * time.Minute)) // ends again
	shutdown(t, p)
	if got, want := failures(sink), []string{`te3 paused-end ""`, `te3 paused-end ""`}; !slices.Equal(got, want) {
		t.Errorf("failures %q, want %q (the first end's, and the next end's of the evaluation begun at turn 14)", got, want)
	}
	if n := p.DormantGroups() + p.OpenGroups(); n != 0 {
		t.Errorf("%d groups left open", n)
	}
}

// failures lists the violations a sink received as "assertion
// conversation-turn mark".
func failures(sink *consumertest.TracesSink) []string {
	var out []string
	eachFailure(sink, func(span ptrace.Span, a map[string]any) {
		history, _ := a[verdictattr.History].(string)
		out = append(out, fmt.Sprintf("%s %s-%s %q", a[verdictattr.EvaluationName], a[verdictattr.Group], turnOf(span), history))
	})
	slices.Sort(out)
	return out
}

// turnOf is the turn of the span a verdict is on: its trace's start minute,
// or "end" on a verdict span (the group ended after its spans left).
func turnOf(span ptrace.Span) string {
	if span.Name() == stage.VerdictSpanName {
		return "end"
	}
	return fmt.Sprint(int(span.StartTimestamp().AsTime().Sub(fixtures.StoveEpoch) / time.Minute))
}

// eachFailure calls f with each violation a sink received: the span it is
// on and the verdict event's attributes.
func eachFailure(sink *consumertest.TracesSink, f func(ptrace.Span, map[string]any)) {
	eachEvaluation(sink, func(span ptrace.Span, a map[string]any) {
		if a[verdictattr.ScoreLabel] == verdictattr.LabelFail {
			f(span, a)
		}
	})
}

// eachEvaluation calls f with each verdict a sink received.
func eachEvaluation(sink *consumertest.TracesSink, f func(ptrace.Span, map[string]any)) {
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					for _, ev := range span.Events().All() {
						if ev.Name() == verdictattr.EvaluationEvent {
							f(span, ev.Attributes().AsRaw())
						}
					}
				}
			}
		}
	}
}
