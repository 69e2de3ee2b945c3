// SPDX-License-Identifier: Apache-2.0

package tracebuffer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/room"
)

var t0 = time.Unix(1_700_000_000, 0)

func traceID(n int) pcommon.TraceID {
	return pcommon.TraceID{15: byte(n), 14: byte(n >> 8), 13: byte(n >> 16), 12: byte(n >> 24)}
}

func spanID(n int) pcommon.SpanID { return pcommon.SpanID{7: byte(n), 6: byte(n >> 8)} }

// span is one span to send: trace, span number, root or not.
type span struct {
	trace, id int
	root      bool
}

func batch(spans ...span) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agent")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("gcp.vertex.agent")
	for _, s := range spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID(s.trace))
		sp.SetSpanID(spanID(s.id))
		if !s.root {
			sp.SetParentSpanID(spanID(1000 + s.trace))
		}
		sp.SetName(fmt.Sprintf("span-%d", s.id))
	}
	return td
}

// spanNames lists a trace's span names with its resource and scope checked.
func spanNames(t *testing.T, td ptrace.Traces) []string {
	var names []string
	forEachScope(td, func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) {
		if v, _ := rs.Resource().Attributes().Get("service.name"); v.Str() != "agent" || ss.Scope().Name() != "gcp.vertex.agent" {
			t.Fatalf("resource or scope lost: %v %q", rs.Resource().Attributes().AsRaw(), ss.Scope().Name())
		}
		for _, sp := range ss.Spans().All() {
			names = append(names, sp.Name())
		}
	})
	slices.Sort(names)
	return names
}

func TestWaitAndRootWait(t *testing.T) {
	b := New(Config{Wait: 10 * time.Second, RootWait: time.Second, MaxTraces: 10, RememberReleased: 10})
	b.Add(batch(span{1, 1, false}), t0)
	b.Add(batch(span{2, 2, false}), t0)
	b.Add(batch(span{2, 3, true}), t0.Add(2*time.Second))
	if out := b.Expire(t0.Add(2500 * time.Millisecond)); len(out) != 0 {
		t.Fatalf("released %d traces too early", len(out))
	}
	out := b.Expire(t0.Add(3 * time.Second))
	if len(out) != 1 || out[0].ID != traceID(2) || out[0].Reason != RootDone || out[0].Count != 2 {
		t.Fatalf("after root_wait: %+v", out)
	}
	out = b.Expire(t0.Add(10 * time.Second))
	if len(out) != 1 || out[0].ID != traceID(1) || out[0].Reason != Complete {
		t.Fatalf("after wait: %+v", out)
	}
	if b.Len() != 0 || b.Spans() != 0 {
		t.Fatalf("held %d traces, %d spans", b.Len(), b.Spans())
	}
}

func TestNewSpanPostponesWait(t *testing.T) {
	b := New(Config{Wait: 10 * time.Second, MaxTraces: 10, RememberReleased: 10})
	b.Add(batch(span{1, 1, false}), t0)
	b.Add(batch(span{1, 2, false}), t0.Add(8*time.Second))
	if out := b.Expire(t0.Add(12 * time.Second)); len(out) != 0 {
		t.Fatal("released although a span came 4s ago")
	}
	if out := b.Expire(t0.Add(18 * time.Second)); len(out) != 1 || out[0].Count != 2 {
		t.Fatalf("got %+v", out)
	}
}

func TestReleasedInStartOrder(t *testing.T) {
	b := New(Config{Wait: time.Second, MaxTraces: 10, RememberReleased: 10})
	td := batch(span{1, 1, true}, span{2, 2, true}, span{3, 3, true})
	for i, start := range []int64{30, 10, 20} {
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(i).SetStartTimestamp(pcommon.Timestamp(start))
	}
	b.Add(td, t0)
	var got []byte
	for _, tr := range b.Flush() {
		got = append(got, tr.ID[15])
	}
	if string(got) != "\x02\x03\x01" {
		t.Fatalf("released traces %v, want 2 3 1", got)
	}
}

func TestEvictsOldestPastMaxTraces(t *testing.T) {
	b := New(Config{Wait: time.Minute, MaxTraces: 2, RememberReleased: 10})
	b.Add(batch(span{1, 1, false}), t0)
	b.Add(batch(span{2, 2, false}), t0.Add(time.Second))
	_, _, out := b.Add(batch(span{3, 3, false}, span{1, 4, false}), t0.Add(2*time.Second))
	if len(out) != 1 || out[0].ID != traceID(1) || out[0].Reason != Evicted || out[0].Count != 2 || !out[0].Reason.Early() {
		t.Fatalf("evicted %+v", out)
	}
	if b.Len() != 2 {
		t.Fatalf("held %d", b.Len())
	}
}

func TestOversizeAndLateSpans(t *testing.T) {
	b := New(Config{Wait: time.Minute, MaxTraces: 10, MaxSpansPerTrace: 3, RememberReleased: 10})
	b.Add(batch(span{1, 1, false}, span{1, 2, false}), t0)
	late, n, out := b.Add(batch(span{1, 3, false}, span{1, 4, false}, span{2, 5, false}), t0)
	if len(out) != 1 || out[0].Reason != Oversize || out[0].Count != 4 || n != 0 || late.SpanCount() != 0 {
		t.Fatalf("oversize: out %+v, late %d", out, n)
	}
	late, n, out = b.Add(batch(span{1, 6, false}, span{2, 7, false}), t0)
	if n != 1 || late.SpanCount() != 1 || len(out) != 0 {
		t.Fatalf("late: %d spans, out %+v", n, out)
	}
	if got := spanNames(t, late); !slices.Equal(got, []string{"span-6"}) {
		t.Fatalf("late spans %v", got)
	}
}

func TestRememberedIDsAreBounded(t *testing.T) {
	b := New(Config{Wait: time.Second, MaxTraces: 100, RememberReleased: 2})
	for i := 1; i <= 3; i++ {
		b.Add(batch(span{i, i, false}), t0)
	}
	b.Expire(t0.Add(time.Second))
	if len(b.released.set) != 2 || b.released.has(traceID(1)) {
		t.Fatalf("remembered %v", b.released.set)
	}
	// trace 1 was forgotten: its straggler is held as a trace of its own.
	if _, n, _ := b.Add(batch(span{1, 9, false}), t0.Add(2*time.Second)); n != 0 || b.Len() != 1 {
		t.Fatalf("late %d, held %d", n, b.Len())
	}
}

// Every span that enters leaves exactly once, whatever the batching, the
// order and the bounds; without early releases every trace comes out whole.
func TestConservation(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for round := range 300 {
		var spans []span
		for tr := 1; tr <= 1+r.IntN(12); tr++ {
			for i := range 1 + r.IntN(8) {
				spans = append(spans, span{tr, tr*100 + i, i == 0})
			}
		}
		r.Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
		tight := round%2 == 0
		cfg := Config{Wait: 5 * time.Second, RootWait: 3 * time.Second, MaxTraces: 1000, RememberReleased: 1000}
		if tight {
			cfg.MaxTraces, cfg.MaxSpansPerTrace = 1+r.IntN(4), 1+r.IntN(6)
		}
		b := New(cfg)
		var out []string
		perTrace := map[pcommon.TraceID][]string{}
		collect := func(ts []*Trace) {
			for _, tr := range ts {
				names := spanNames(t, tr.Spans)
				out = append(out, names...)
				perTrace[tr.ID] = append(perTrace[tr.ID], names...)
			}
		}
		now := t0
		for len(spans) > 0 {
			n := 1 + r.IntN(len(spans))
			late, _, forced := b.Add(batch(spans[:n]...), now)
			spans = spans[n:]
			out = append(out, spanNames(t, late)...)
			collect(forced)
			if tight {
				now = now.Add(time.Duration(r.IntN(4)) * time.Second)
				collect(b.Expire(now))
			}
		}
		collect(b.Flush())
		if b.Spans() != 0 || b.Len() != 0 {
			t.Fatalf("round %d: %d spans still held", round, b.Spans())
		}
		want := 0
		for _, names := range perTrace {
			want += len(names)
		}
		slices.Sort(out)
		if len(slices.Compact(slices.Clone(out))) != len(out) {
			t.Fatalf("round %d: a span left twice: %v", round, out)
		}
		if !tight {
			for id, names := range perTrace {
				if n := int(id[15]); len(names) == 0 || names[0] != fmt.Sprintf("span-%d", n*100) {
					t.Fatalf("round %d: trace %d came out as %v", round, n, names)
				}
			}
		}
	}
}

// BenchmarkAddExpire: one op is a batch of 100 spans (10 traces of 10) in
// and, a second later, out; the batch's construction is not timed. mixed
// puts the ten traces under one scope (spans move one by one), split gives
// each trace a scope of its own (whole scopes move).
func BenchmarkAddExpire(b *testing.B) {
	for _, shape := range []string{"mixed", "split"} {
		b.Run(shape, func(b *testing.B) {
			buf := New(Config{Wait: time.Second, MaxTraces: 100_000, RememberReleased: 100_000})
			spans := make([]span, 100)
			b.ReportAllocs()
			now := t0
			for i := range b.N {
				b.StopTimer()
				for j := range spans {
					spans[j] = span{i*10 + j/10, j, j%10 == 0}
				}
				td := batch(spans...)
				if shape == "split" {
					td = ptrace.NewTraces()
					for k := range 10 {
						batch(spans[k*10 : k*10+10]...).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
					}
				}
				b.StartTimer()
				buf.Add(td, now)
				now = now.Add(time.Second)
				buf.Expire(now)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
		})
	}
}

// BenchmarkExpireManyHeld: 10 000 traces held and 10 coming due per tick;
// one op is one Expire (the deadline queue pops the due ones instead of
// scanning all that are held).
func BenchmarkExpireManyHeld(b *testing.B) {
	buf := New(Config{Wait: 1000 * time.Second, MaxTraces: 1_000_000, RememberReleased: 1000})
	now := t0
	next := 0
	add := func() {
		spans := make([]span, 10)
		for j := range spans {
			spans[j] = span{next, next, true}
			next++
		}
		buf.Add(batch(spans...), now)
		now = now.Add(time.Second)
	}
	for range 1000 {
		add()
	}
	buf.Expire(now) // the first batch is due
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		add()
		b.StartTimer()
		if out := buf.Expire(now); len(out) != 10 {
			b.Fatalf("released %d", len(out))
		}
	}
}

// Take releases a held trace before it is due; its later spans come back
// late, and Refresh keeps a trace that goes on sending remembered, with its
// group, while others are released.
func TestTakeAndRefresh(t *testing.T) {
	b := New(Config{Wait: time.Second, MaxTraces: 100, RememberReleased: 2})
	b.Add(batch(span{1, 1, false}), t0)
	tr := b.Held(traceID(1))
	if tr == nil || b.Held(traceID(2)) != nil {
		t.Fatal("Held: trace 1 not held, or trace 2 held")
	}
	b.Take(tr)
	b.File(traceID(1), "conv")
	if b.Len() != 0 || tr.Reason != Taken || tr.Reason.Early() || len(b.Expire(t0.Add(time.Second))) != 0 {
		t.Fatalf("after Take: held %d, reason %v", b.Len(), tr.Reason)
	}
	for i := 2; i <= 4; i++ {
		b.Refresh(traceID(1))
		b.Add(batch(span{i, i, false}), t0)
		b.Take(b.Held(traceID(i)))
	}
	if _, n, _ := b.Add(batch(span{1, 9, false}), t0); n != 1 {
		t.Fatalf("trace 1, refreshed, forgotten among %d released since", 3)
	}
	if g, ok := b.GroupOf(traceID(1)); !ok || g != "conv" {
		t.Errorf("group after refreshes: %q %v", g, ok)
	}
	b.Refresh(traceID(7)) // never released: nothing to remember
	if b.released.has(traceID(7)) {
		t.Error("Refresh remembered a trace never released")
	}
}

// A burst of traces held and released leaves no room behind: the trace map,
// the eviction queue and the deadline queues are made small again, and the
// buffer works on as before.
func TestBurstRoomIsLetGo(t *testing.T) {
	b := New(Config{Wait: time.Second, MaxTraces: 100_000, RememberReleased: 10})
	const burst = 10_000
	for n := range burst {
		b.Add(batch(span{n, 1, true}), t0)
	}
	if got := len(b.Expire(t0.Add(2 * time.Second))); got != burst {
		t.Fatalf("%d released, want %d", got, burst)
	}
	b.Add(batch(span{burst, 1, true}), t0.Add(3*time.Second)) // compacts the eviction queue
	if b.peak > room.Min || cap(b.arrivals) > room.Min || cap(b.waits.q) > room.Min {
		t.Errorf("after the burst: a map made for %d traces, room for %d arrivals and %d deadlines", b.peak, cap(b.arrivals), cap(b.waits.q))
	}
	if out := b.Expire(t0.Add(5 * time.Second)); len(out) != 1 || out[0].ID != traceID(burst) {
		t.Fatalf("after the burst: %d released", len(out))
	}
}
