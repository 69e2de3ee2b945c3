// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// worker judges the groups routed to it, one batch at a time, and owns their
// state: no lock is taken on this path.
type worker[G any] struct {
	s         *Stage[G]
	src       *events.Source
	in        *inbox[G]
	stopped   chan struct{}
	groups    *Recent[*group[G]]
	maxGroups int
	tally     tally
	verdicts  verdictSpans
	services  map[string]*string // service names, interned: many groups share one
	forgotten *forgotten         // groups ended early, or kept and let go: a return is marked partial
	retained  *Recent[[]byte]    // groups that ended idle, saved, for Retention: a later turn continues them
	released  *Recent[[]byte]    // traces that were groups of their own, ended at their release, saved for group_timeout: late spans continue them
	dormant   *Recent[[]byte]    // open groups idle for compact_after, saved (dormant.go)
	judged    *judgedSpans       // nil unless Config.RememberJudged
	held      *heldKeys          // in a tier: the keys of its groups, for hand-overs
	stateBuf  []byte             // scratch for a group's saved state (saved)
	savedBuf  []byte             // scratch for a group's saved form (saveGroup)
	// unforgotten is journal entries of spans passed on that the storage
	// did not delete: tried again with the next item, and meanwhile no
	// checkpoint is written.
	unforgotten []uint64
	// changed is the groups judged or ended since their state was last
	// written to the state log (with storage), and states the state
	// entries it wrote since its last snapshot.
	changed map[string]struct{}
	states  []uint64
	out     *outbox // what it judged and has not passed on yet (send_batch)
	index   int     // its slot in a snapshot
}

// group is one open group: the evaluator's state, the latched predicates,
// and where a verdict span would go.
type group[G any] struct {
	state       G
	latch       predicate.Latch
	trace       pcommon.TraceID
	lastSpan    pcommon.SpanID // the last event's span, the verdict span's parent
	service     *string        // interned; nil when unknown
	history     History
	latest      pcommon.Timestamp // the latest start of a trace judged: an earlier one is out of order
	latestEvent pcommon.Timestamp // the latest start of an event judged: a later-judged earlier one (late, or OnArrival) is out of order
	own         bool              // a trace that is a group of its own
	// ended: a trace that is a group of its own, ended once already at its
	// release and taken up again by late spans; the verdicts of its next end
	// are marked out_of_order.
	ended bool
}

// The reasons a group ends.
const (
	endComplete = "complete"   // its own trace was judged
	endIdle     = "idle"       // no new event for group_timeout
	endBound    = "max_traces" // more open groups than max_traces: ended early
	endShutdown = "shutdown"   // the collector is stopping
)

func newWorker[G any](s *Stage[G], src *events.Source, seed uint64, maxGroups int) *worker[G] {
	return &worker[G]{
		s: s, src: src, in: newInbox[G](), stopped: make(chan struct{}),
		groups: NewRecent[*group[G]](), maxGroups: maxGroups, tally: s.watch.newTally(), services: map[string]*string{},
		forgotten: newForgotten(maxGroups), retained: NewRecent[[]byte](), released: NewRecent[[]byte](), dormant: NewRecent[[]byte](), index: int(seed), judged: rememberJudged(s.cfg.RememberJudged),
		out: newOutbox(s.cfg.SendBatch), changed: map[string]struct{}{},
		verdicts: verdictSpans{scope: s.cfg.Scope, rng: rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))},
	}
}

func (w *worker[G]) run() {
	defer close(w.stopped)
	for {
		items, ok := w.in.take(w.out.due())
		if !ok {
			w.flush(context.Background()) // a final item passed everything on already
			return
		}
		if len(items) == 0 { // the oldest span held waited send_batch.timeout
			w.flush(context.Background())
			continue
		}
		for _, item := range items {
			w.do(item)
			w.s.queued.done(item.weight)
			if item.done != nil {
				item.done.Done()
			}
		}
	}
}

// batch is what one work item passes on, and the last event of each group it
// judged, still here to take end-of-group verdicts.
type batch struct {
	out       ptrace.Traces
	lastEvent map[string]ptrace.Span
}

func (w *worker[G]) do(item work[G]) {
	if item.query != nil {
		item.query(w)
		return
	}
	ctx := context.Background()
	b := batch{out: ptrace.NewTraces(), lastEvent: map[string]ptrace.Span{}}
	for _, r := range item.traces {
		w.s.countEarly(ctx, r.trace, item.now)
		w.judge(ctx, &b, r.key, r.own, r.trace.Spans, r.trace.Start(), r.trace.LastArrival(), item.now)
		r.trace.Spans.ResourceSpans().MoveAndAppendTo(b.out.ResourceSpans())
	}
	for _, l := range item.late {
		w.judge(ctx, &b, l.key, l.own, l.spans, l.start, item.now, item.now)
		l.spans.ResourceSpans().MoveAndAppendTo(b.out.ResourceSpans())
	}
	for w.openCount() > w.maxGroups {
		w.end(ctx, &b, w.oldestOpen(), endBound, item.now)
	}
	if item.idle {
		for _, key := range append(w.dormant.Idle(item.now, w.s.cfg.GroupTimeout), w.groups.Idle(item.now, w.s.cfg.GroupTimeout)...) {
			w.end(ctx, &b, key, endIdle, item.now)
		}
		w.expireRetained(item.now)
		w.compact(item.now)
	}
	if item.final {
		for _, key := range append(w.dormant.Keys(), w.groups.Keys()...) {
			w.end(ctx, &b, key, endShutdown, item.now)
		}
	}
	w.s.watch.flush(ctx, &w.tally, w.s.tel.PredicateHeld, w.s.Warnings)
	w.s.typos.look(ctx, w.index, item.now, w.s.watch, w.s.tel.SuspectedTypos, w.s.Warnings)
	if td, n := w.verdicts.take(); n > 0 {
		w.s.tel.VerdictSpans.Add(ctx, int64(n))
		td.ResourceSpans().MoveAndAppendTo(b.out.ResourceSpans())
	}
	var journal []uint64
	if w.s.journal != nil {
		journal = journaled(item)
	}
	// A checkpoint records what was judged: what that passes on must have
	// left, or a crash would lose it.
	w.send(ctx, b.out, journal, item.final || item.snapshot != nil)
	if item.snapshot != nil {
		w.snapshot(&item.snapshot[w.index])
	}
}

// earliestStart is the earliest start of td's spans (0: none).
func earliestStart(td ptrace.Traces) pcommon.Timestamp {
	var first pcommon.Timestamp
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if st := sp.StartTimestamp(); first == 0 || st < first {
					first = st
				}
			}
		}
	}
	return first
}

// journaled is the journal entries of an item's spans.
func journaled[G any](item work[G]) []uint64 {
	var seqs []uint64
	for _, r := range item.traces {
		seqs = append(seqs, r.trace.Journal...)
	}
	for _, l := range item.late {
		seqs = append(seqs, l.journal...)
	}
	return seqs
}

// judge extracts a chunk's events, whose latest span arrived at seen, and
// has the evaluator judge them as its group's next ones. traceStart is the
// start of the chunk's trace (of a trace taken on arrival: its earliest span
// so far), 0 for late spans (the continuation of a trace already judged). A trace that is a group of its own ends here when no late
// span can continue it.
func (w *worker[G]) judge(ctx context.Context, b *batch, key string, own bool, td ptrace.Traces, traceStart pcommon.Timestamp, seen, now time.Time) {
	start := time.Now()
	w.change(key)
	g := w.groups.Touch(key, seen, func() *group[G] {
		if g, ok := w.wake(key, now); ok {
			return g
		}
		w.s.opened(1)
		w.held.add(key)
		if g := w.resume(ctx, key); g != nil {
			if g.own, g.ended = own, own; own {
				w.s.Warnings.Once("late-resumed", "spans took up a trace that had ended (judged when it was released, or idle past group_timeout): they are judged where it ended, and the verdicts of its next end are marked out_of_order (raise wait, root_wait or group_timeout for fewer)", zap.String("group", key))
			}
			return g
		}
		var movedUnknown bool
		if !own {
			var g *group[G]
			if g, movedUnknown = w.takeOver(ctx, key); g != nil {
				return g
			}
		}
		g := &group[G]{state: w.s.eval.Open(key), latch: w.src.NewLatch(), own: own}
		if reason, ok := w.forgotten.take(key); ok {
			w.mark(ctx, g, HistoryPartial, reason, key)
		} else if own && traceStart == 0 {
			// Late spans of a trace that ended (at its release, or idle on
			// arrival) and is no longer kept.
			w.mark(ctx, g, HistoryPartial, markRetention, key)
		} else if movedUnknown {
			w.mark(ctx, g, HistoryPartial, markRescale, key)
		} else if w.s.warm.partial(now, own, traceStart) {
			w.mark(ctx, g, HistoryPartial, markWarmUp, key)
		}
		return g
	})
	if own && g.history&HistoryPartial == 0 && w.s.warm.on(now) && w.s.warm.before(earliestStart(td)) {
		// A trace of its own judged on arrival shows where it began only
		// when its root comes, often last: one that began before the start
		// may have had spans judged, or lost, before it.
		w.mark(ctx, g, HistoryPartial, markWarmUp, key)
	}
	if traceStart != 0 {
		if traceStart < g.latest {
			w.mark(ctx, g, HistoryOutOfOrder, markOutOfOrder, key)
		}
		g.latest = max(g.latest, traceStart)
	}
	evs, errs := w.src.Extract(td, &g.latch)
	w.s.typos.note(now, td, len(evs), w.s.watch)
	if w.judged != nil {
		w.judged.addAll(td)
	}
	w.s.countErrors(ctx, errs)
	if w.s.cfg.OnArrival || traceStart == 0 {
		// Judged as they arrive, or late: an event may come after a later
		// one of its group.
		w.countOutOfOrder(ctx, g, key, evs)
	} else {
		for _, ev := range evs {
			g.latestEvent = max(g.latestEvent, ev.Start)
		}
	}
	for _, ev := range evs {
		w.tally.add(ev.Bits)
	}
	w.s.eval.Events(ctx, key, g.state, g.history, evs)
	if len(evs) > 0 {
		last := evs[len(evs)-1].Span
		g.trace, g.lastSpan = last.TraceID(), last.SpanID()
		b.lastEvent[key] = last
	} else if g.trace.IsEmpty() {
		g.trace = firstTraceID(td)
	}
	if g.service == nil {
		g.service = w.intern(serviceName(td))
	}
	if tel := w.s.tel.EvaluationTime; tel != nil {
		tel.Record(ctx, time.Since(start).Seconds())
	}
	if own && w.s.cfg.Late == LateResume {
		w.end(ctx, b, key, endComplete, now)
	}
}

func rememberJudged(size int) *judgedSpans {
	if size <= 0 {
		return nil
	}
	return newJudgedSpans(size)
}

// countOutOfOrder counts the events that start before an event the group
// already judged (OnArrival): an event that overlaps a later one, such as
// a parallel tool call or one enclosing another, sent in a later batch.
// Equal starts are in order: the later arrival comes after, as in
// sequence.Compare.
func (w *worker[G]) countOutOfOrder(ctx context.Context, g *group[G], key string, evs []sequence.Event) {
	n := 0
	for _, ev := range evs {
		if ev.Start < g.latestEvent {
			n++
		} else {
			g.latestEvent = ev.Start
		}
	}
	if n == 0 {
		return
	}
	if c := w.s.tel.OutOfOrderEvents; c != nil {
		c.Add(ctx, int64(n))
	}
	w.mark(ctx, g, HistoryOutOfOrder, markOutOfOrder, key)
	w.s.Warnings.Once("out-of-order", "an event arrived after a later-starting event of its group was judged; it is judged as the continuation (events that overlap in time and are exported in different batches; score: when_complete orders them)",
		zap.String("group", key), zap.Int("events", n))
}

// end ends a group: its end-of-group verdicts go on its last event's span if
// this batch still holds it, else on a verdict span.
func (w *worker[G]) end(ctx context.Context, b *batch, key, reason string, now time.Time) {
	w.change(key)
	g, ok := w.groups.Remove(key)
	if !ok {
		if g, ok = w.wake(key, now); !ok {
			return
		}
	}
	w.s.opened(-1)
	if reason == endBound {
		w.s.tel.GroupsEndedEarly.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrReason, reason)))
		w.s.Warnings.Once("groups", "more open groups than max_traces: the least recently active was ended early; its end-of-group verdicts are reported now, and a later event starts it afresh",
			zap.String("group", key))
	}
	at := &Target{}
	if span, ok := b.lastEvent[key]; ok {
		at.span, at.ready = span, true
	} else {
		at.make = func() ptrace.Span {
			service := ""
			if g.service != nil {
				service = *g.service
			}
			return w.verdicts.make(key, g.trace, g.lastSpan, service, now)
		}
	}
	switch {
	case reason == endBound:
		w.forgotten.add(key, markBound, now)
	// Saved before End reports its end-of-sequence verdicts: a later turn,
	// or a late span of a trace ended at its release, goes on from there.
	case reason == endIdle && !g.own:
		w.retain(key, g, now)
	case reason == endComplete, reason == endIdle: // a trace of its own, ended at its release or idle (on arrival)
		w.keepReleased(key, g, now)
	}
	if _, kept := w.retained.Get(key); !kept {
		w.held.remove(key)
	}
	h := g.history
	if g.ended {
		h |= HistoryOutOfOrder
	}
	w.s.eval.End(ctx, key, g.state, h, at)
}

// mark marks a group's history, counting and logging once each reason the
// first time it marks the group.
func (w *worker[G]) mark(ctx context.Context, g *group[G], h History, reason, key string) {
	if g.history&h != 0 {
		return
	}
	g.history |= h
	w.s.tel.GroupsHistoryIncomplete.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrReason, reason)))
	w.s.Warnings.Once("history-"+reason, "a group's history may be incomplete: its verdicts carry "+verdictattr.History+" (see docs/faults.md)",
		zap.String("reason", reason), zap.String("group", key))
}

// intern is the worker's one copy of a service name; nil for "".
func (w *worker[G]) intern(name string) *string {
	if name == "" {
		return nil
	}
	p, ok := w.services[name]
	if !ok {
		if len(w.services) >= maxServices {
			return nil // a verdict span without service.name beats unbounded memory
		}
		p = &name
		w.services[name] = p
	}
	return p
}

// maxServices bounds the interned service names of a worker.
const maxServices = 10_000

func firstTraceID(td ptrace.Traces) pcommon.TraceID {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				return sp.TraceID()
			}
		}
	}
	return pcommon.TraceID{}
}

func serviceName(td ptrace.Traces) string {
	for _, rs := range td.ResourceSpans().All() {
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok && v.Str() != "" {
			return v.Str()
		}
	}
	return ""
}
