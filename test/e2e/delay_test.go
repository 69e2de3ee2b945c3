// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/e2e"
	"github.com/agentguard/agentguard/test/harness"
)

// Live traffic for the delay measurement: conversations of the paper's
// failing run (te1 decided within each turn, on its span) and of the greeting
// agent that keeps control (te1 decided when the conversation ends, on a
// verdict span), started every stagger, each with a pause between its turns.
const (
	delayConversations = 30 // of each kind
	stagger            = 50 * time.Millisecond
	pause              = 200 * time.Millisecond
)

// TestVerdictDelay measures the delay from the receipt of a conversation's
// spans (the OTLP/HTTP receiver accepted the request) to the arrival of its
// verdict log records at the logs backend, with the weather agents'
// configuration: p50 and p99 are logged (go test -run TestVerdictDelay -v),
// and every verdict must arrive within its bound.
func TestVerdictDelay(t *testing.T) {
	t.Setenv("AGENTGUARD_GROUP_TIMEOUT", groupTimeout.String())
	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := e2e.StartCollector(t, sink, weatherConfig)

	failing := e2e.Requests(t, "../../testdata/traces/adk-weather/adk-bad-43-0.json")
	failing = append(failing, e2e.Requests(t, "../../testdata/traces/adk-weather/adk-bad-43-1.json")...)
	keeps := e2e.Requests(t, keepsControlFile)

	var mu sync.Mutex
	receipt := map[string]time.Time{}     // trace ID -> when its request was accepted
	lastReceipt := map[string]time.Time{} // conversation -> its last turn's
	var wg sync.WaitGroup
	errs := make(chan error, 2*delayConversations)
	start := time.Now()
	for i := range 2 * delayConversations {
		kind, reqs := "failing", failing
		if i%2 == 1 {
			kind, reqs = "keeps", keeps
		}
		conv := fmt.Sprintf("%s-%02d", kind, i/2)
		turns := cloneConversation(t, reqs, conv, start.Add(time.Duration(i)*stagger))
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(time.Duration(i) * stagger)))
			for j, turn := range turns {
				if j > 0 {
					time.Sleep(pause)
				}
				at, err := e2e.Post(addr, turn.body)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				receipt[turn.trace], lastReceipt[conv] = at, at
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Two te1 violations per failing run, one per greeting agent that keeps control.
	want := 3 * delayConversations
	if !sink.WaitFor(want, groupTimeout+wait+10*time.Second) {
		t.Fatalf("%d verdict records, want %d", len(sink.Records()), want)
	}
	sink.WaitQuiet(500*time.Millisecond, 5*time.Second)

	var onSpan, atEnd []time.Duration
	for _, r := range sink.Received() {
		a := r.Record.Attributes().AsRaw()
		group, _ := a[verdictattr.Group].(string)
		if span, _ := a[verdictattr.SpanName].(string); span == "agentguard verdict" {
			atEnd = append(atEnd, r.At.Sub(lastReceipt[group]))
		} else {
			onSpan = append(onSpan, r.At.Sub(receipt[r.Record.TraceID().String()]))
		}
	}
	if len(onSpan) != 2*delayConversations || len(atEnd) != delayConversations {
		t.Fatalf("%d verdicts on spans and %d at the end of conversations, want %d and %d",
			len(onSpan), len(atEnd), 2*delayConversations, delayConversations)
	}
	t.Logf("verdicts on spans (%d, root_wait %v): %s", len(onSpan), rootWait, percentiles(onSpan))
	t.Logf("verdicts at the end of a conversation (%d, group_timeout %v): %s", len(atEnd), groupTimeout, percentiles(atEnd))
	// A trace is judged root_wait after its root span came, at the next tick
	// of the clock (a quarter of root_wait); a conversation ends group_timeout
	// after its last trace came (its arrival precedes the response to the
	// request by a little: 100ms of slack). The second beyond is for a
	// loaded machine.
	if worst := slices.Max(onSpan); worst > rootWait+time.Second {
		t.Errorf("a verdict on a span came %v after its spans, beyond root_wait %v + 1s", worst, rootWait)
	}
	if worst, best := slices.Max(atEnd), slices.Min(atEnd); best < groupTimeout-100*time.Millisecond || worst > groupTimeout+rootWait+time.Second {
		t.Errorf("end-of-conversation verdicts came %v to %v after the last turn, want within group_timeout %v + root_wait + 1s", best, worst, groupTimeout)
	}
}

func percentiles(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return fmt.Sprintf("p50 %v, p99 %v, max %v", at(0.50).Round(time.Millisecond), at(0.99).Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// turn is one export request of a conversation and the trace it holds.
type turn struct {
	body  []byte
	trace string
}

// cloneConversation makes a new conversation of recorded requests, one trace
// each: new trace and span IDs, the conversation id conv wherever ADK puts
// one, and times moved so that its first span starts at start.
func cloneConversation(t *testing.T, reqs [][]byte, conv string, start time.Time) []turn {
	t.Helper()
	var u ptrace.JSONUnmarshaler
	var m ptrace.JSONMarshaler
	tds := make([]ptrace.Traces, len(reqs))
	var first pcommon.Timestamp
	for i, b := range reqs {
		td, err := u.UnmarshalTraces(b)
		if err != nil {
			t.Fatal(err)
		}
		tds[i] = td
		eachSpan(td, func(sp ptrace.Span) {
			if first == 0 || sp.StartTimestamp() < first {
				first = sp.StartTimestamp()
			}
		})
	}
	shift := pcommon.NewTimestampFromTime(start) - first
	out := make([]turn, len(tds))
	for i, td := range tds {
		eachSpan(td, func(sp ptrace.Span) {
			sp.SetTraceID(pcommon.TraceID(hashID(conv, sp.TraceID().String())))
			sp.SetSpanID(newSpanID(conv, sp.SpanID()))
			if !sp.ParentSpanID().IsEmpty() {
				sp.SetParentSpanID(newSpanID(conv, sp.ParentSpanID()))
			}
			sp.SetStartTimestamp(sp.StartTimestamp() + shift)
			sp.SetEndTimestamp(sp.EndTimestamp() + shift)
			for _, k := range []string{"gen_ai.conversation.id", "gcp.vertex.agent.session_id"} {
				if _, ok := sp.Attributes().Get(k); ok {
					sp.Attributes().PutStr(k, conv)
				}
			}
			out[i].trace = sp.TraceID().String()
		})
		b, err := m.MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		out[i].body = b
	}
	return out
}

// hashID is a new ID for old in conversation conv: the same old ID always
// maps to the same new one, so parents stay parents.
func hashID(conv, old string) [16]byte {
	h := sha256.Sum256([]byte(conv + "/" + old))
	return [16]byte(h[:16])
}

func newSpanID(conv string, old pcommon.SpanID) pcommon.SpanID {
	h := hashID(conv, old.String())
	return pcommon.SpanID(h[:8])
}

func eachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				f(sp)
			}
		}
	}
}

// Live household episodes for probguard's delay: copies of real LangGraph
// episodes (ep-001 leaves the stove on and comes back in time, ep-004
// becomes unsafe, ep-010 never leaves it on), each exported as its agent's SDK would if it flushed after every
// tool call, a pause (a model call) between requests.
const (
	riskEpisodes = 10 // of each
	riskPause    = 200 * time.Millisecond
)

// TestRiskDelay measures, with the household example's configuration, the
// delay from the sending of a tool span to its risk annotation (the verdict
// log record's observed time: when verdictlogs took the annotated span from
// probguard) and to the arrival of its verdict log record at the logs
// backend, with score: when_complete (the trace held until it is complete)
// and on_arrival: p50 and p99 are logged (go test -run TestRiskDelay -v).
// Both must decide the same verdicts; on arrival, each within a second.
func TestRiskDelay(t *testing.T) {
	verdicts := map[Score][]string{}
	for _, score := range []Score{"when_complete", "on_arrival"} {
		annotated, logged, got := riskDelays(t, score)
		verdicts[score] = got
		t.Logf("score: %s, %d warnings: to the annotation %s; to the log record %s", score, len(got), percentiles(annotated), percentiles(logged))
		if score == "on_arrival" {
			if worst := slices.Max(logged); worst > time.Second {
				t.Errorf("on arrival, a warning reached the logs backend %v after its span was sent", worst)
			}
		}
	}
	if a, b := verdicts["when_complete"], verdicts["on_arrival"]; !slices.Equal(a, b) {
		t.Errorf("the verdicts differ:\nwhen_complete %q\non_arrival    %q", a, b)
	}
}

// Score is probguard's score setting.
type Score string

// riskDelays plays the episodes through a collector scoring as score says
// and returns each warning's delays and the verdicts, sorted, as "group
// event label".
func riskDelays(t *testing.T, score Score) (annotated, logged []time.Duration, verdicts []string) {
	t.Helper()
	t.Setenv("AGENTGUARD_HOUSEHOLD_MODEL", householdModel)
	overlay := filepath.Join(t.TempDir(), "score.yaml")
	if err := os.WriteFile(overlay, []byte("processors:\n  probguard:\n    score: "+string(score)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := e2e.StartCollector(t, sink, householdConfig, overlay)

	var mu sync.Mutex
	sent := map[string]time.Time{} // span ID -> when its request was sent
	var wg sync.WaitGroup
	errs := make(chan error, 3*riskEpisodes)
	start := time.Now()
	for i := range 3 * riskEpisodes {
		ep := []string{"ep-001", "ep-004", "ep-010"}[i%3]
		reqs := exportAsItRuns(t, "../../testdata/traces/household-langgraph/"+ep+".json", fmt.Sprintf("%s-%02d", ep, i/3), start)
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(time.Duration(i) * stagger)))
			for j, req := range reqs {
				if j > 0 {
					time.Sleep(riskPause)
				}
				at := time.Now()
				mu.Lock()
				for _, id := range req.spans {
					sent[id] = at
				}
				mu.Unlock()
				if _, err := e2e.Post(addr, req.body); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// How many warnings is the example model's business; both ways of
	// scoring must give the same. The last come root_wait after the last
	// episode ended.
	if !sink.WaitFor(1, 10*time.Second) {
		t.Fatalf("score %s: no verdict record", score)
	}
	sink.WaitQuiet(time.Second, 10*time.Second)
	for _, r := range sink.Received() {
		at, ok := sent[r.Record.SpanID().String()]
		if !ok {
			t.Fatalf("a verdict on span %s, which was never sent", r.Record.SpanID())
		}
		annotated = append(annotated, r.Record.ObservedTimestamp().AsTime().Sub(at))
		logged = append(logged, r.At.Sub(at))
		a := r.Record.Attributes().AsRaw()
		verdicts = append(verdicts, fmt.Sprintf("%v %v %v", a[verdictattr.Group], a[verdictattr.EventNumber], a[verdictattr.ScoreLabel]))
	}
	slices.Sort(verdicts)
	return annotated, logged, verdicts
}

// request is one export request and the span IDs it carries.
type request struct {
	body  []byte
	spans []string
}

// exportAsItRuns makes a new episode of a recorded one (one trace, its spans
// in the order they ended): new trace and span IDs, session.id conv, times
// moved to start at start; cut into one request after each tool span, as an
// agent that flushes its span processor after every tool call exports it.
func exportAsItRuns(t *testing.T, path, conv string, start time.Time) []request {
	t.Helper()
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(e2e.Requests(t, path)[0])
	if err != nil {
		t.Fatal(err)
	}
	var first pcommon.Timestamp
	eachSpan(td, func(sp ptrace.Span) {
		if first == 0 || sp.StartTimestamp() < first {
			first = sp.StartTimestamp()
		}
	})
	shift := pcommon.NewTimestampFromTime(start) - first
	rs := td.ResourceSpans().At(0)
	spans := rs.ScopeSpans().At(0).Spans()
	var out []request
	var m ptrace.JSONMarshaler
	cut := func(from, to int) {
		req := ptrace.NewTraces()
		rrs := req.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(rrs.Resource())
		rss := rrs.ScopeSpans().AppendEmpty()
		rs.ScopeSpans().At(0).Scope().CopyTo(rss.Scope())
		var ids []string
		for i := from; i < to; i++ {
			sp := rss.Spans().AppendEmpty()
			spans.At(i).CopyTo(sp)
			sp.SetTraceID(pcommon.TraceID(hashID(conv, sp.TraceID().String())))
			sp.SetSpanID(newSpanID(conv, sp.SpanID()))
			if !sp.ParentSpanID().IsEmpty() {
				sp.SetParentSpanID(newSpanID(conv, sp.ParentSpanID()))
			}
			sp.SetStartTimestamp(sp.StartTimestamp() + shift)
			sp.SetEndTimestamp(sp.EndTimestamp() + shift)
			sp.Attributes().PutStr("session.id", conv)
			ids = append(ids, sp.SpanID().String())
		}
		b, err := m.MarshalTraces(req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, request{body: b, spans: ids})
	}
	from := 0
	for i, sp := range spans.All() {
		if v, ok := sp.Attributes().Get("openinference.span.kind"); ok && v.Str() == "TOOL" {
			cut(from, i+1)
			from = i + 1
		}
	}
	if from < spans.Len() {
		cut(from, spans.Len())
	}
	return out
}
