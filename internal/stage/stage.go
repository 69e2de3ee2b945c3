// SPDX-License-Identifier: Apache-2.0

// Package stage is the holding stage that temporalcheck and probguard share:
// it holds each trace until it is complete, hands it to the worker that owns
// its group, where an Evaluator judges the group's new events, and passes
// every span on.
//
// Traces are held in shards by trace ID, each under its own short lock (a
// span is moved, never evaluated, under it). Released traces go to workers by
// group key, so a conversation always lands on the same worker, which owns
// its state without a lock: evaluation runs on as many cores as there are
// workers. The workers' queue is bounded: when the evaluators fall behind,
// ConsumeTraces blocks until there is room (or the caller's context ends,
// and then nothing was taken), so memory stays bounded and the receiver
// pushes back on the sender. A batch the next consumer refuses is kept and
// retried (deliver.go): it keeps the queue full, so a refusal downstream
// holds back the sender too, and no acknowledged span is dropped.
package stage

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/stage/tracebuffer"
)

// Evaluator judges groups of events. The stage calls it from several workers
// at once, never for the same group at once; a group's state G is owned by
// its worker.
type Evaluator[G any] interface {
	// Open is the state of a new group.
	Open(key string) G
	// Events judges the group's next events, in order, and may annotate
	// their spans. Verdicts decided on a history that is not Complete must
	// carry its mark (verdictattr.History).
	Events(ctx context.Context, key string, g G, h History, evs []sequence.Event)
	// End ends the group: verdicts it decides now are written on at, marked
	// as in Events.
	End(ctx context.Context, key string, g G, h History, at *Target)
}

// Forgetter is an Evaluator that holds something of a group outside its
// state (probguard: its slot at the risk endpoint). Forget lets go of it
// when the group leaves without End: handed over to another collector,
// dropped because its saved form does not decode, or, ended and kept,
// rebuilt for a question only.
type Forgetter interface {
	Forget(key string)
}

// Resumer is an Evaluator whose End did something a group that goes on
// must undo (probguard's learning counted the run's move to its end).
// Resumed is called with the state as it was saved before End, when a group
// that ended (a conversation kept for retention, a trace kept for its late
// spans) is taken up again by a later trace, here or, handed over, at
// another member of the tier.
type Resumer[G any] interface {
	Resumed(key string, g G)
}

// forget tells the evaluator, if it holds anything outside the state, that
// group key has left without End.
func (w *worker[G]) forget(key string) {
	if f, ok := w.s.eval.(Forgetter); ok {
		f.Forget(key)
	}
}

// queueSpansPerWorker bounds the spans handed to the workers and not yet
// judged and passed on, per worker: past it, ConsumeTraces waits.
const queueSpansPerWorker = 10_000

// Stage holds traces and runs an Evaluator over their groups. It implements
// processor.Traces.
type Stage[G any] struct {
	cfg      Config
	eval     Evaluator[G]
	next     consumer.Traces
	tel      Metrics
	logger   *zap.Logger
	Warnings *Warnings
	now      func() time.Time
	watch    *predicateWatch
	typos    *typoWatch
	health   health

	shards  []*shard
	workers []*worker[G]
	seed    maphash.Seed
	queued  *backlog

	openGroups atomic.Int64
	// dormantGroups are the open groups kept in their saved form (dormant.go).
	dormantGroups atomic.Int64
	warm          warmUp

	store   storage.Client // nil without Config.Storage
	journal *journal       // the spans held, in store; nil without it
	states  *stateLog      // the state of groups judged since the checkpoint, in store
	// subsumed is state entries the next checkpoint holds the effect of and
	// deletes: read at start, or left by a checkpoint that failed. Under tickMu.
	subsumed []uint64
	// unreadAtStart: the checkpoint or the journal could not be read at
	// start (Start writes no checkpoint over them).
	unreadAtStart  bool
	tier           Tier      // the other collectors, to take over groups from; nil alone
	lastCheckpoint time.Time // under tickMu

	startWorkers sync.Once
	tickMu       sync.Mutex // one release by the clock (or Tick) at a time
	clock        ticker
	shutdown     sync.Once
	aborted      chan struct{} // closed when Shutdown's deadline passes: refused batches are given up
}

type shard struct {
	mu   sync.Mutex
	buf  *tracebuffer.Buffer
	held int // traces held as last told to the gauge
}

// released is a trace let go by a buffer, with the group it belongs to.
type released struct {
	trace *tracebuffer.Trace
	key   string
	own   bool // the trace is a group of its own
}

// lateChunk is late spans of one trace, for the group it was filed under.
type lateChunk struct {
	spans   ptrace.Traces
	key     string
	own     bool
	start   pcommon.Timestamp // a trace taken on arrival: its start so far; 0: a continuation
	journal []uint64          // the journal entries holding the spans
	late    bool              // counted as late (late_spans)
}

// New makes a stage. newSource compiles the predicates once per worker
// (OTTL evaluation is not safe for concurrent use).
func New[G any](cfg Config, set component.TelemetrySettings, next consumer.Traces, tel Metrics,
	newSource func() (*events.Source, error), eval Evaluator[G]) (*Stage[G], error) {
	if _, ok := any(eval).(Checkpointer[G]); cfg.Storage != nil && !ok {
		return nil, fmt.Errorf("storage: this processor cannot checkpoint its groups")
	}
	if cfg.OnArrival && cfg.Late != LateContinue {
		// A trace taken on arrival goes on as late spans: passed unjudged, they would be lost to it.
		return nil, fmt.Errorf("judging on arrival needs late spans continued (LateContinue)")
	}
	n := cfg.workers()
	queue := cfg.QueueSpans
	if queue <= 0 {
		queue = n * queueSpansPerWorker
	}
	s := &Stage[G]{
		cfg: cfg, eval: eval, next: next, tel: tel, logger: set.Logger, Warnings: NewWarnings(set.Logger), now: time.Now,
		seed: maphash.MakeSeed(), queued: newBacklog(int64(queue)), aborted: make(chan struct{}),
	}
	perShard := (cfg.MaxTraces + n - 1) / n
	for range n {
		s.shards = append(s.shards, &shard{buf: tracebuffer.New(tracebuffer.Config{
			Wait: cfg.Wait, RootWait: cfg.RootWait, MaxTraces: perShard, MaxSpansPerTrace: cfg.MaxSpansPerTrace,
			RememberReleased: max(perShard, minRemembered/n),
		})})
	}
	for i := range n {
		src, err := newSource()
		if err != nil {
			return nil, err
		}
		if s.watch == nil {
			s.watch = newPredicateWatch(src.Names(), cfg.WarnUnheldAfter, cfg.Optional)
			s.typos = newTypoWatch(cfg, n)
		}
		s.workers = append(s.workers, newWorker(s, src, uint64(i), perShard))
	}
	return s, nil
}

// UseClock makes the stage read time from now: for tests, before Start and
// before any span is consumed.
func (s *Stage[G]) UseClock(now func() time.Time) { s.now = now }

// Capabilities: the stage annotates spans.
func (s *Stage[G]) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start restores the checkpoint (with storage) and runs the workers and the
// clock that releases complete traces, ends idle groups and checkpoints.
// It runs before any span is consumed.
func (s *Stage[G]) Start(ctx context.Context, host component.Host) error {
	lost := true // without storage, nothing says history was not lost
	if s.cfg.Storage != nil {
		var err error
		if lost, err = s.openStorage(ctx, host); err != nil {
			return err
		}
		s.lastCheckpoint = s.now()
		if s.store != nil {
			if err := s.replayJournal(ctx); err != nil {
				s.logger.Error("the journal of held spans cannot be read: the spans a crash left in it are not replayed", zap.Error(err))
				s.unreadAtStart = true
			}
		}
	}
	if s.cfg.WarmUp > 0 && lost {
		s.warm.set(s.now(), s.cfg.WarmUp)
	}
	s.health.start(host)
	s.ensureWorkers()
	if s.store != nil && !s.unreadAtStart {
		// A checkpoint that is not a shutdown's, at once: a crash from here
		// on must find one, or a first start, or one from a shutdown's
		// checkpoint, would look clean after it and start no warm-up. And
		// the checkpoint in storage may not say where the state log's
		// entries after it begin (an older build's, or a log that could not
		// be read or applied, or one that cannot be restored): entries
		// written before a new one would not be applied after a crash.
		// Not over a checkpoint or journal that could not be read (an I/O
		// error may pass): a restart before the first periodic checkpoint
		// can still read them.
		s.checkpoint(ctx, s.now(), false)
	}
	s.clock.start(s.cfg.interval(), func() { s.tick(s.now(), false) })
	return nil
}

// ensureWorkers starts the workers once. A stage used without Start (the
// offline check) starts them on its first spans.
func (s *Stage[G]) ensureWorkers() {
	s.startWorkers.Do(func() {
		for _, w := range s.workers {
			go w.run()
		}
	})
}

// ConsumeTraces takes the spans in. Spans that cannot be held pass at once;
// late spans of released traces continue their group; traces a bound
// forces out go to their workers now. With storage, the
// spans held are journaled before it returns, or the batch is refused.
func (s *Stage[G]) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	s.ensureWorkers()
	if err := s.admit(ctx, int64(td.SpanCount())); err != nil {
		return err
	}
	pass := s.takeUnheld(ctx, td)
	var entries []journalEntry
	if s.journal != nil {
		var err error
		if entries, err = s.journal.write(ctx, td); err != nil {
			return s.refuse(ctx, td.SpanCount()+pass.SpanCount(), err)
		}
	}
	now := s.now()
	forced, late := s.hold(ctx, td, entries, now)
	item := work[G]{now: now}
	var done sync.WaitGroup
	if s.cfg.OnArrival {
		// One chunk a group, so that its events in this batch are judged in
		// their order, not in the order of the traces and shards they came in.
		late = mergeChunks(late)
		item.done = &done
	}
	s.dispatch(forced, late, item)
	s.deliver(ctx, pass)
	done.Wait()
	return nil
}

// hold files a batch's spans in their shards' buffers. What a bound forces
// out, and late spans that continue their groups, come back to be
// dispatched.
func (s *Stage[G]) hold(ctx context.Context, td ptrace.Traces, entries []journalEntry, now time.Time) (forced []released, late []lateChunk) {
	byShard := s.entriesByShard(entries)
	for _, part := range s.byShard(td) {
		sh := s.shards[part.shard]
		var ids []pcommon.TraceID
		if s.cfg.OnArrival {
			ids = traceIDs(part.spans)
		}
		var lateEntries map[pcommon.TraceID]uint64
		sh.mu.Lock()
		lateSpans, n, out := sh.buf.Add(part.spans, now)
		if byShard != nil {
			lateEntries = fileEntries(sh.buf, out, byShard[part.shard])
		}
		forced = append(forced, s.route(sh, out)...)
		if n > 0 {
			late = append(late, s.routeLate(ctx, sh, lateSpans, lateEntries)...)
		}
		if s.cfg.OnArrival {
			late = append(late, s.takeGrouped(sh, ids)...)
		}
		s.recordHeld(ctx, sh)
		sh.mu.Unlock()
	}
	return forced, late
}

// traceIDs lists the trace IDs of td's spans, once each.
func traceIDs(td ptrace.Traces) []pcommon.TraceID {
	var ids []pcommon.TraceID
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if id := sp.TraceID(); !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

// takeGrouped takes out of the buffer, as chunks for their groups' workers,
// the traces of ids whose group is known (OnArrival). A trace without the
// group_by attribute so far stays held: a later batch may bring it, or the
// trace completes and is a group of its own.
func (s *Stage[G]) takeGrouped(sh *shard, ids []pcommon.TraceID) []lateChunk {
	var out []lateChunk
	for _, id := range ids {
		t := sh.buf.Held(id)
		if t == nil {
			continue
		}
		key, found := sequence.GroupOf(t.Spans, s.cfg.GroupBy)
		if !found {
			if s.cfg.GroupBy != sequence.ByTraceID {
				continue
			}
			key = id.String()
		} else {
			s.typos.carried()
		}
		sh.buf.Take(t)
		sh.buf.File(id, key)
		out = append(out, lateChunk{spans: t.Spans, key: key, own: !found, start: t.Start(), journal: t.Journal})
	}
	return out
}

// mergeChunks merges the chunks of each group into one, in place, starting
// at the earliest start of the traces taken in them.
func mergeChunks(chunks []lateChunk) []lateChunk {
	if len(chunks) < 2 {
		return chunks
	}
	at := map[string]int{}
	out := chunks[:0]
	for _, c := range chunks {
		if i, ok := at[c.key]; ok {
			c.spans.ResourceSpans().MoveAndAppendTo(out[i].spans.ResourceSpans())
			out[i].journal = append(out[i].journal, c.journal...)
			if c.start != 0 && (out[i].start == 0 || c.start < out[i].start) {
				out[i].start = c.start
			}
			continue
		}
		at[c.key] = len(out)
		out = append(out, c)
	}
	return out
}

// admit waits until the workers' backlog has room for n spans: while it
// has not, the evaluators are behind. A caller that gives up has handed over
// nothing, so its retry duplicates nothing.
func (s *Stage[G]) admit(ctx context.Context, n int64) error {
	if ok, _ := s.queued.fits(n); ok {
		s.health.admitted(true)
		return nil
	}
	s.tel.QueueFullWaits.Add(ctx, 1)
	s.Warnings.Once("queue-full", "the evaluators are behind: incoming spans wait for room (consider more workers, or a lighter configuration)")
	err := s.queued.wait(ctx, n)
	s.health.admitted(err == nil)
	return err
}

// takeUnheld moves out of td what the stage must not hold: spans without a
// trace ID (they cannot be told apart, and merged they would judge unrelated
// calls as one run) and the verdict spans of agentguard processors before
// this one. They are returned to be passed on at once.
func (s *Stage[G]) takeUnheld(ctx context.Context, td ptrace.Traces) ptrace.Traces {
	pass := ptrace.NewTraces()
	noID := 0
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		var prs ptrace.ResourceSpans
		moved := false
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			if isVerdictScope(ss) {
				if !moved {
					prs, moved = newResourceLike(pass, rs), true
				}
				ss.MoveTo(prs.ScopeSpans().AppendEmpty())
				return true
			}
			var pss ptrace.ScopeSpans
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if !sp.TraceID().IsEmpty() {
					return false
				}
				if pss == (ptrace.ScopeSpans{}) {
					if !moved {
						prs, moved = newResourceLike(pass, rs), true
					}
					pss = prs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(pss.Scope())
					pss.SetSchemaUrl(ss.SchemaUrl())
				}
				sp.MoveTo(pss.Spans().AppendEmpty())
				noID++
				return true
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	if noID > 0 {
		s.tel.SpansWithoutTraceID.Add(ctx, int64(noID))
		s.Warnings.Once("no-trace-id", "spans without a trace ID were passed on unjudged: they cannot be grouped with their trace", zap.Int("spans", noID))
	}
	return pass
}

func newResourceLike(td ptrace.Traces, rs ptrace.ResourceSpans) ptrace.ResourceSpans {
	out := td.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(out.Resource())
	out.SetSchemaUrl(rs.SchemaUrl())
	return out
}

// shardOf spreads trace IDs over the shards. Both halves count: the W3C
// spec makes only the right half random, some generators only the left.
func (s *Stage[G]) shardOf(id pcommon.TraceID) int {
	h := binary.LittleEndian.Uint64(id[:8]) ^ binary.LittleEndian.Uint64(id[8:])
	return int(h % uint64(len(s.shards)))
}

// shardPart is the spans of a batch that belong to one shard.
type shardPart struct {
	shard int
	spans ptrace.Traces
}

// byShard splits td by the shard of each span's trace; td is emptied. A
// batch of one shard's traces (one trace, or one shard) is not copied.
func (s *Stage[G]) byShard(td ptrace.Traces) []shardPart {
	if one, ok := s.oneShard(td); ok {
		if td.ResourceSpans().Len() == 0 {
			return nil
		}
		return []shardPart{{one, td}}
	}
	parts := make([]ptrace.Traces, len(s.shards))
	for i := range parts {
		parts[i] = ptrace.NewTraces()
	}
	moveSpans(td, func(sp ptrace.Span) int { return s.shardOf(sp.TraceID()) }, func(i int) ptrace.Traces { return parts[i] })
	out := make([]shardPart, 0, len(parts))
	for i, p := range parts {
		if p.ResourceSpans().Len() > 0 {
			out = append(out, shardPart{i, p})
		}
	}
	return out
}

func (s *Stage[G]) oneShard(td ptrace.Traces) (int, bool) {
	first := -1
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				i := s.shardOf(sp.TraceID())
				if first >= 0 && i != first {
					return 0, false
				}
				first = i
			}
		}
	}
	return max(first, 0), true
}

// route finds the group of each released trace and files it, so that late
// spans find it too. A trace without the group_by attribute is a group of
// its own, keyed by its trace ID.
func (s *Stage[G]) route(sh *shard, ts []*tracebuffer.Trace) []released {
	out := make([]released, 0, len(ts))
	for _, t := range ts {
		key, found := sequence.GroupOf(t.Spans, s.cfg.GroupBy)
		if !found {
			key = t.ID.String()
		} else {
			s.typos.carried()
		}
		sh.buf.File(t.ID, key)
		out = append(out, released{trace: t, key: key, own: !found})
	}
	return out
}

// routeLate splits late spans into chunks for their groups' workers, to be
// judged as the continuation, and counts those that are late: judged on
// arrival, the later batches of a trace taken on arrival are not (one
// released without its group, after wait, or forced out, is). entries are
// the journal's for this batch's late traces.
func (s *Stage[G]) routeLate(ctx context.Context, sh *shard, spans ptrace.Traces, entries map[pcommon.TraceID]uint64) []lateChunk {
	var chunks []lateChunk
	index := map[pcommon.TraceID]int{}
	moveSpans(spans, ptrace.Span.TraceID, func(id pcommon.TraceID) ptrace.Traces {
		i, ok := index[id]
		if !ok {
			i = s.lateChunk(sh, id, &chunks)
			index[id] = i
			if seq, journaled := entries[id]; journaled {
				chunks[i].journal = append(chunks[i].journal, seq)
			}
		}
		return chunks[i].spans
	})
	n := 0
	for _, c := range chunks {
		if c.late {
			n += c.spans.SpanCount()
		}
	}
	if n > 0 {
		s.tel.LateSpans.Add(ctx, int64(n))
		s.Warnings.Once("late", "spans arrived after their trace was judged; they are judged as the continuation of its group, in arrival order, and an event that starts before one already judged marks the group out_of_order (raise wait for a strict order)", zap.Int("spans", n))
	}
	return chunks
}

// lateChunk is the index in chunks of the chunk for a late trace's spans,
// added now. A trace that was a group of its own and ended at its release
// (LateResume) is taken up again where it ended (worker.resume).
func (s *Stage[G]) lateChunk(sh *shard, id pcommon.TraceID, chunks *[]lateChunk) int {
	late := !s.cfg.OnArrival || !sh.buf.Taken(id)
	if s.cfg.OnArrival {
		sh.buf.Refresh(id)
	}
	key, filed := sh.buf.GroupOf(id)
	if !filed {
		key = id.String()
	}
	*chunks = append(*chunks, lateChunk{spans: ptrace.NewTraces(), key: key, own: key == id.String(), late: late})
	return len(*chunks) - 1
}

// moveSpans moves every span of td into the batch into picks for its key,
// under a copy of its resource and scope made once a key and scope; td is
// emptied. It splits a batch by shard and late spans by trace.
func moveSpans[K comparable](td ptrace.Traces, key func(ptrace.Span) K, into func(K) ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			dest := map[K]ptrace.SpanSlice{}
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				k := key(sp)
				spans, ok := dest[k]
				if !ok {
					dss := newResourceLike(into(k), rs).ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(dss.Scope())
					dss.SetSchemaUrl(ss.SchemaUrl())
					spans = dss.Spans()
					dest[k] = spans
				}
				sp.MoveTo(spans.AppendEmpty())
				return true
			})
		}
	}
}

// recordHeld keeps the traces-held gauge equal to the shards' sizes.
func (s *Stage[G]) recordHeld(ctx context.Context, sh *shard) {
	if n := sh.buf.Len(); n != sh.held {
		s.tel.TracesHeld.Add(ctx, int64(n-sh.held))
		sh.held = n
	}
}

// opened counts n groups opened (negative: ended).
func (s *Stage[G]) opened(n int64) {
	s.openGroups.Add(n)
	s.tel.GroupsOpen.Add(context.Background(), n)
}

// slept counts n groups gone dormant (negative: woken, ended or handed
// over).
func (s *Stage[G]) slept(n int64) {
	s.dormantGroups.Add(n)
	s.tel.GroupsDormant.Add(context.Background(), n)
}

// OpenGroups is the number of groups open in the workers.
func (s *Stage[G]) OpenGroups() int { return int(s.openGroups.Load()) }

// DormantGroups is how many of the open groups are kept in their saved form,
// idle for compact_after.
func (s *Stage[G]) DormantGroups() int { return int(s.dormantGroups.Load()) }

// Held is the number of traces held.
func (s *Stage[G]) Held() int {
	n := 0
	for _, sh := range s.shards {
		sh.mu.Lock()
		n += sh.buf.Len()
		sh.mu.Unlock()
	}
	return n
}

// Tick releases the traces complete at now, has the workers judge them and
// end the groups idle at now, and returns when they are done: a test's
// clock. The stage's own clock does the same without waiting for the
// workers, so that releasing goes on while they judge.
func (s *Stage[G]) Tick(now time.Time) { s.tick(now, true) }

func (s *Stage[G]) tick(now time.Time, wait bool) {
	s.ensureWorkers()
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	item := work[G]{now: now, idle: true, all: true}
	var done sync.WaitGroup
	if wait {
		item.done = &done
	}
	s.dispatch(s.release(func(b *tracebuffer.Buffer) []*tracebuffer.Trace { return b.Expire(now) }), nil, item)
	done.Wait()
	if s.store != nil && now.Sub(s.lastCheckpoint) >= s.cfg.CheckpointEvery {
		s.checkpoint(context.Background(), now, false)
	}
	if s.cfg.AfterTick != nil {
		s.cfg.AfterTick()
	}
}

// release takes traces out of every shard, ordered by their start, so that
// the turns of a conversation held in different shards are judged in order.
func (s *Stage[G]) release(take func(*tracebuffer.Buffer) []*tracebuffer.Trace) []released {
	var rs []released
	ctx := context.Background()
	for _, sh := range s.shards {
		sh.mu.Lock()
		rs = append(rs, s.route(sh, take(sh.buf))...)
		s.recordHeld(ctx, sh)
		sh.mu.Unlock()
	}
	slices.SortFunc(rs, func(a, b released) int { return tracebuffer.CompareStart(a.trace, b.trace) })
	return rs
}

// work is one batch for one worker.
type work[G any] struct {
	traces []released
	late   []lateChunk
	now    time.Time
	idle   bool // end the groups idle at now
	final  bool // end every group: the stage is shutting down
	all    bool // send to every worker, even with nothing to judge
	// snapshot, if set, has each worker save its groups in its slot, after
	// the rest of the item.
	snapshot []part
	done     *sync.WaitGroup
	weight   int64 // its spans, as the queue weighs them
	// query, if set, is all the item is: a question about a group (Ask),
	// answered on the worker that owns it.
	query func(*worker[G])
}

// onlyClock is an item of the clock's with nothing to judge: two of them in
// a row are one, at the later time.
func (w *work[G]) onlyClock() bool {
	return w.query == nil && w.idle && !w.final && len(w.traces) == 0 && len(w.late) == 0 && w.done == nil && w.snapshot == nil
}

func (w *work[G]) spans() int64 {
	n := 0
	for _, r := range w.traces {
		n += r.trace.Count
	}
	for _, l := range w.late {
		n += l.spans.SpanCount()
	}
	return int64(n)
}

// dispatch hands each worker its share, in order. It does not wait: what it
// hands over was held already, or was admitted.
func (s *Stage[G]) dispatch(rs []released, late []lateChunk, template work[G]) {
	shares := make([]work[G], len(s.workers))
	for _, r := range rs {
		i := s.workerOf(r.key)
		shares[i].traces = append(shares[i].traces, r)
	}
	for _, l := range late {
		i := s.workerOf(l.key)
		shares[i].late = append(shares[i].late, l)
	}
	for i, share := range shares {
		if len(share.traces) == 0 && len(share.late) == 0 && !template.all {
			continue
		}
		item := template
		item.traces, item.late = share.traces, share.late
		item.weight = item.spans()
		if item.done != nil {
			item.done.Add(1)
		}
		s.queued.add(item.weight)
		s.workers[i].in.put(item)
	}
}

func (s *Stage[G]) workerOf(key string) int {
	if len(s.workers) == 1 {
		return 0
	}
	return int(maphash.String(s.seed, key) % uint64(len(s.workers)))
}

// Shutdown judges and passes on everything held and stops the workers. It
// ends every group, or with storage checkpoints them for the next start.
func (s *Stage[G]) Shutdown(ctx context.Context) error {
	var err error
	s.shutdown.Do(func() {
		finished := make(chan struct{})
		defer close(finished)
		go func() {
			select {
			case <-ctx.Done():
				close(s.aborted)
			case <-finished:
			}
		}()
		s.clock.halt()
		s.ensureWorkers()
		s.tickMu.Lock()
		defer s.tickMu.Unlock()
		var done sync.WaitGroup
		now := s.now()
		s.dispatch(s.release(func(b *tracebuffer.Buffer) []*tracebuffer.Trace { return b.Flush() }), nil,
			work[G]{now: now, final: s.store == nil, done: &done, all: true})
		done.Wait()
		if s.store != nil {
			s.checkpoint(ctx, now, true)
			err = s.store.Close(ctx)
		}
		for _, w := range s.workers {
			w.in.close()
		}
		for _, w := range s.workers {
			<-w.stopped
		}
	})
	return err
}

// countEarly counts and logs once a trace released before it was complete.
func (s *Stage[G]) countEarly(ctx context.Context, t *tracebuffer.Trace, now time.Time) {
	if !t.Reason.Early() && !s.cutAtShutdown(t, now) {
		return
	}
	reason := t.Reason.String()
	s.tel.TracesReleasedEarly.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrReason, reason)))
	why := "a trace was released before it was complete (raise max_traces or max_spans_per_trace)"
	if t.Reason == tracebuffer.Shutdown {
		why = "a trace was judged at shutdown before its root span came: its verdicts miss the spans still to come, which a restart judges as a trace of their own"
	}
	s.Warnings.Once("early-"+reason, why, zap.String("reason", reason), zap.Stringer("trace_id", t.ID))
}

// cutAtShutdown reports whether a trace flushed at shutdown was cut short:
// its root span had not come, and a span of it came within wait (one whose
// root is elsewhere, quiet for wait, would have been released complete).
func (s *Stage[G]) cutAtShutdown(t *tracebuffer.Trace, now time.Time) bool {
	_, rooted := t.RootArrival()
	return t.Reason == tracebuffer.Shutdown && !rooted && now.Sub(t.LastArrival()) < s.cfg.Wait
}

// countErrors counts OTTL errors and logs each failing predicate once.
func (s *Stage[G]) countErrors(ctx context.Context, errs events.Errors) {
	if errs.Count == 0 {
		return
	}
	s.tel.PredicateErrors.Add(ctx, int64(errs.Count))
	for name, err := range errs.First {
		s.Warnings.Once("predicate-error-"+name, "a predicate's OTTL condition failed on a span; it counts as false there",
			zap.String("predicate", name), zap.Error(err))
	}
}

// Sync returns when every batch handed to the workers before it was called
// has been judged and passed on.
func (s *Stage[G]) Sync() {
	s.ensureWorkers()
	var done sync.WaitGroup
	s.dispatch(nil, nil, work[G]{all: true, done: &done})
	done.Wait()
}
