// SPDX-License-Identifier: Apache-2.0

package tracebuffer

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// contents is what a released trace holds, as a sorted multiset of
// "resource|scope|span" lines, so that regrouping under copies of resources
// and scopes does not count as a difference.
func contents(td ptrace.Traces) []string {
	var out []string
	forEachScope(td, func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) {
		for _, sp := range ss.Spans().All() {
			out = append(out, fmt.Sprintf("%v|%s|%s %v %v %v", rs.Resource().Attributes().AsRaw(), ss.Scope().Name(),
				sp.Name(), sp.SpanID(), sp.ParentSpanID(), sp.Attributes().AsRaw()))
		}
	})
	slices.Sort(out)
	return out
}

// spread puts each span under one of two resources and two scopes, with an
// attribute, so that the test sees resources and scopes kept.
func spread(spans []span) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, s := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprint("svc-", s.id%2))
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(fmt.Sprint("scope-", s.id%3))
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID(s.trace))
		sp.SetSpanID(spanID(s.id))
		if !s.root {
			sp.SetParentSpanID(spanID(1000 + s.trace))
		}
		sp.SetName(fmt.Sprint("span-", s.id))
		sp.Attributes().PutInt("n", int64(s.id))
	}
	return td
}

// merge combines batches into one, so one call can carry several traces
// under several resources.
func merge(tds ...ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, td := range tds {
		td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

// Whatever the batching and the order, each trace comes out with the same
// spans under the same resources and scopes.
func TestReleasedContentIndependentOfBatching(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 100 {
		var spans []span
		for tr := 1; tr <= 1+r.IntN(10); tr++ {
			for i := range 1 + r.IntN(10) {
				spans = append(spans, span{tr, tr*100 + i, i == 0})
			}
		}
		var want map[string][]string
		for way := range 4 {
			order := slices.Clone(spans)
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			b := New(Config{Wait: time.Minute, MaxTraces: 1000, RememberReleased: 1000})
			for len(order) > 0 {
				n := 1 + r.IntN(len(order))
				var parts []ptrace.Traces
				for _, s := range order[:n] { // one resource per span, or all in one batch
					parts = append(parts, spread([]span{s}))
				}
				if way%2 == 0 {
					parts = []ptrace.Traces{merge(parts...)}
				}
				for _, td := range parts {
					if _, late, out := b.Add(td, t0); late != 0 || len(out) != 0 {
						t.Fatalf("round %d: late %d, forced %d", round, late, len(out))
					}
				}
				order = order[n:]
			}
			got := map[string][]string{}
			for _, tr := range b.Flush() {
				got[tr.ID.String()] = contents(tr.Spans)
				if tr.Count != len(got[tr.ID.String()]) {
					t.Fatalf("round %d: Count %d, %d spans", round, tr.Count, len(got[tr.ID.String()]))
				}
			}
			if want == nil {
				want = got
			} else if !maps.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("round %d, way %d: released\n%v\nfirst way\n%v", round, way, got, want)
			}
		}
	}
}

// An ID released, forgotten, then seen again is a new trace; the old one's
// place in the eviction queue must not evict the new one early.
func TestEvictionSkipsAForgottenEarlierTrace(t *testing.T) {
	b := New(Config{Wait: time.Second, MaxTraces: 2, RememberReleased: 1})
	b.Add(batch(span{1, 1, false}), t0)
	b.Expire(t0.Add(time.Second)) // trace 1 released
	b.Add(batch(span{9, 2, false}), t0.Add(2*time.Second))
	b.Expire(t0.Add(3 * time.Second)) // trace 9 released: trace 1 is forgotten
	b.Add(batch(span{5, 3, false}), t0.Add(4*time.Second))
	b.Add(batch(span{1, 4, false}), t0.Add(5*time.Second)) // trace 1 again, new
	_, _, out := b.Add(batch(span{6, 5, false}), t0.Add(6*time.Second))
	if len(out) != 1 || out[0].ID != traceID(5) || out[0].Reason != Evicted {
		t.Fatalf("evicted %+v, want trace 5, the oldest held", out)
	}
}

// A fake clock may start at the zero time: a root arriving then still
// counts.
func TestRootAtZeroTime(t *testing.T) {
	var zero time.Time
	b := New(Config{Wait: time.Hour, RootWait: time.Second, MaxTraces: 10, RememberReleased: 10})
	b.Add(batch(span{1, 1, true}), zero)
	out := b.Expire(zero.Add(time.Second))
	if len(out) != 1 || out[0].Reason != RootDone {
		t.Fatalf("got %+v", out)
	}
	if at, ok := out[0].RootArrival(); !ok || !at.Equal(zero) {
		t.Fatalf("root arrival %v %v", at, ok)
	}
	if out[0].FirstArrival() != zero || out[0].LastArrival() != zero {
		t.Fatalf("arrivals %v %v", out[0].FirstArrival(), out[0].LastArrival())
	}
}

// The arrival metadata of a released trace.
func TestArrivalMetadata(t *testing.T) {
	b := New(Config{Wait: 10 * time.Second, MaxTraces: 10, RememberReleased: 10})
	sp := batch(span{1, 1, false}, span{1, 2, false})
	sp.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).SetStartTimestamp(7)
	sp.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetStartTimestamp(9)
	b.Add(sp, t0)
	b.Add(batch(span{1, 3, true}), t0.Add(time.Second))
	out := b.Flush()
	if len(out) != 1 || out[0].Reason != Shutdown {
		t.Fatalf("got %+v", out)
	}
	tr := out[0]
	if at, ok := tr.RootArrival(); !ok || !at.Equal(t0.Add(time.Second)) || tr.FirstArrival() != t0 ||
		tr.LastArrival() != t0.Add(time.Second) || tr.Start() != 0 {
		t.Fatalf("root %v, first %v, last %v, start %v", at, tr.FirstArrival(), tr.LastArrival(), tr.Start())
	}
}

// A trace that keeps growing leaves stale deadlines behind; they are dropped
// as they come due, so the queue stays at about one wait's worth.
func TestDeadlineQueueIsBounded(t *testing.T) {
	b := New(Config{Wait: 10 * time.Second, MaxTraces: 10, RememberReleased: 10})
	now := t0
	for i := range 1000 {
		b.Add(batch(span{1, i, false}), now)
		if out := b.Expire(now); len(out) != 0 {
			t.Fatalf("released at span %d although it keeps growing", i)
		}
		if b.waits.len() > 11 {
			t.Fatalf("%d deadlines queued after %d spans", b.waits.len(), i+1)
		}
		now = now.Add(time.Second)
	}
	if out := b.Expire(now.Add(9 * time.Second)); len(out) != 1 || out[0].Count != 1000 || b.waits.len() != 0 {
		t.Fatalf("released %+v, %d deadlines left", out, b.waits.len())
	}
}
