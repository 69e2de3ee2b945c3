package e2e_test

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/e2e"
	"github.com/agentguard/agentguard/internal/logsink"
	"github.com/agentguard/agentguard/internal/verdictattr"
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
	t.Setenv("AGENTGUARD_WARM_UP", "0s") // no collector ran before: no history is partial
	sink, err := logsink.Start()
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
