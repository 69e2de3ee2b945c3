// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/internal/spelling"
	"github.com/agentguard/agentguard/internal/stage"
	"github.com/agentguard/agentguard/processor/temporalcheck"
)

// The replay: what the verdicts on spans do not show. The processor reports
// violations; a run can pass because its evaluations were still waiting
// when the input ended. check replays the traces the processor released,
// in the order it released them and as they came in (without the verdicts
// it wrote on them), through the same predicates, grouping and assertions,
// and lists the pending verdicts with what each waited for. (The counts,
// events, predicates held and assertions triggered, are the processor's
// own: see checkcounts.go.)

// waitsBudget bounds the work of telling what the pending evaluations of
// one assertion over one sequence waited for (match ends visited).
const waitsBudget = 1 << 22

// pendingVerdict is an evaluation still waiting when its group ended.
type pendingVerdict struct {
	Assertion  string `json:"assertion"`
	Group      string `json:"group"`
	StartEvent int    `json:"start_event"`
	LastEvent  int    `json:"last_event"` // the sequence's last event: where it ended
	TraceID    string `json:"trace_id"`   // the start event's span, when known
	SpanID     string `json:"span_id"`
	SpanName   string `json:"span_name"`
	// WaitingFor are the sub-expressions the evaluation would have started
	// at the next event; empty when that could not be told.
	WaitingFor []string `json:"waiting_for"`
}

// replayed is what the replay found.
type replayed struct {
	groups        int
	groupKeys     []string // the groups that had events, sorted
	violations    int      // to check the replay against the processor's findings
	pending       []pendingVerdict
	ottlErrors    int
	lateSpans     int                      // spans of batches the processor passed on unchecked
	grouped       bool                     // a trace carried the group_by attribute
	keys          []string                 // attribute keys seen while none did, and the conversation keyword: a misspelt group_by's candidates
	tools, agents map[string]bool          // the names the spans carried: a misspelt literal's candidates
	attrKeys      map[string]bool          // attribute keys the spans and resources carried
	captures      *predicate.CaptureWatch  // capture paths never present in a call of their tool
	quantities    *predicate.QuantityWatch // budgets' quantities no span carried
	compiled      []assertion.Compiled
	triggers      []trigger
}

// trigger is an assertion's FIRST set, computed once.
type trigger struct {
	mask     uint64
	any      bool
	anchored bool // an initially assertion: only a sequence's first event can trigger it
}

// sequenceSoFar is a group's current sequence: what a pending verdict's
// cycles refer to.
type sequenceSoFar struct {
	bits   []uint64
	events []sequence.Event
}

// replayCheck runs the assertions over the batches the processor passed on, each
// a released trace in release order, each span as received holds it.
func replayCheck(id component.ID, cfg *temporalcheck.Config, released, received []ptrace.Traces) (*replayed, error) {
	names := make([]string, len(cfg.Predicates))
	for i, p := range cfg.Predicates {
		names[i] = p.Name
	}
	compiled, err := assertion.Compile(cfg.Assertions, names, cfg.MaxThreads)
	if err != nil {
		return nil, fmt.Errorf("processors::%s: %w", id, err)
	}
	// The processor has logged what the predicates do; the replay only counts.
	ts := offlineSettings(id, io.Discard).TelemetrySettings
	ts.Logger = zap.NewNop()
	src, err := events.NewSource(cfg.Config, cfg.GroupBy, ts)
	if err != nil {
		return nil, fmt.Errorf("processors::%s: %w", id, err)
	}
	r := &replayed{compiled: compiled, pending: []pendingVerdict{}, captures: predicate.NewCaptureWatch(cfg.Config.Literals()),
		quantities: predicate.NewQuantityWatch(cfg.Config.Literals())}
	for _, a := range compiled {
		mask, any := texpr.Triggers(a.Spec.Expr)
		r.triggers = append(r.triggers, trigger{mask, any, a.Spec.Anchored})
	}
	runner := assertion.NewRunner(compiled, assertion.Options{MaxEventsPerGroup: cfg.MaxEventsPerGroup, Captures: cfg.Config.Captures()})
	perTrace := cfg.GroupBy == temporalcheck.GroupByTrace
	seqs := map[string]*sequenceSoFar{}
	groups := map[string]bool{}
	groupOf := map[pcommon.TraceID]string{} // the group each trace seen was filed under
	latches := map[string]*predicate.Latch{}
	for _, td := range splitReleased(released, spansOf(received)) {
		r.noteCaptures(td)
		key, ok := r.groupOf(td, cfg.GroupBy, groupOf)
		if !ok {
			r.lateSpans += td.SpanCount()
			continue
		}
		latch := latches[key]
		if latch == nil || perTrace {
			l := src.NewLatch()
			latch = &l
			latches[key] = latch
		}
		evs, errs := src.Extract(td, latch)
		r.ottlErrors += errs.Count
		for i, ev := range evs {
			groups[key] = true
			seq := seqs[key]
			if seq == nil {
				seq = &sequenceSoFar{}
				seqs[key] = seq
			}
			seq.bits = append(seq.bits, ev.Bits)
			seq.events = append(seq.events, ev)
			last := perTrace && i == len(evs)-1
			r.take(runner.Run(key, []assertion.Event{{Bits: ev.Bits, Time: int64(ev.Start), Name: ev.Span.Name(), Span: ev.Span, Captures: ev.Captures}}, last), seq)
			// The runner starts a new sequence there, its cycles from 1.
			switch {
			case last:
				delete(seqs, key)
			case len(seq.events) >= cfg.MaxEventsPerGroup:
				seq.bits, seq.events = seq.bits[:0], seq.events[:0]
			}
		}
	}
	keys := runner.Keys()
	slices.Sort(keys)
	for _, key := range keys {
		r.take(runner.Finish(key), seqs[key])
	}
	r.groups = len(groups)
	r.groupKeys = slices.Sorted(maps.Keys(groups))
	slices.SortFunc(r.pending, func(a, b pendingVerdict) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Assertion, b.Assertion), cmp.Compare(a.StartEvent, b.StartEvent))
	})
	return r, nil
}

// spanKey identifies a span.
type spanKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// spansOf indexes the spans of batches.
func spansOf(tds []ptrace.Traces) map[spanKey]ptrace.Span {
	out := map[spanKey]ptrace.Span{}
	for _, td := range tds {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					out[spanKey{span.TraceID(), span.SpanID()}] = span
				}
			}
		}
	}
	return out
}

// splitReleased cuts the batches the processor passed on into one batch per
// trace, in the order passed on (a batch holds the traces one worker judged
// together, in order), leaving out agentguard's verdict spans. Each span is
// its copy in received, as it came in, where there is one.
func splitReleased(batches []ptrace.Traces, received map[spanKey]ptrace.Span) []ptrace.Traces {
	var out []ptrace.Traces
	for _, batch := range batches {
		index := map[pcommon.TraceID]int{}
		for _, rs := range batch.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				if ss.Scope().Name() != "" && strings.HasSuffix(ss.Scope().Name(), stage.VerdictScopeSuffix) {
					continue
				}
				for _, span := range ss.Spans().All() {
					i, ok := index[span.TraceID()]
					if !ok {
						i = len(out)
						index[span.TraceID()] = i
						out = append(out, ptrace.NewTraces())
					}
					drs := out[i].ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(drs.Resource())
					dss := drs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(dss.Scope())
					if in, ok := received[spanKey{span.TraceID(), span.SpanID()}]; ok {
						span = in
					}
					span.CopyTo(dss.Spans().AppendEmpty())
				}
			}
		}
	}
	return out
}

// groupOf is the group of a batch of one trace's spans, as the processor
// files it: a new trace's group from its spans (itself without the group_by
// attribute); a later part of a trace in a conversation continues that
// conversation, as the processor judges late spans. ok is false for a later
// part of a trace that was a group of its own, which the processor passes on
// unchecked.
func (r *replayed) groupOf(td ptrace.Traces, groupBy string, groupOf map[pcommon.TraceID]string) (string, bool) {
	id, ok := oneTrace(td)
	if !ok {
		return "", false
	}
	if key, seen := groupOf[id]; seen {
		return key, key != id.String()
	}
	r.noteNames(td)
	key, found := sequence.GroupOf(td, groupBy)
	if found {
		r.grouped = true
	} else {
		key = id.String()
		r.noteKeys(td)
	}
	groupOf[id] = key
	return key, true
}

// noteNames adds a trace's tool and agent names to the candidates of a
// misspelt literal, and its attribute keys to those of a misspelt key in an
// OTTL condition (at most 1000 of each).
func (r *replayed) noteNames(td ptrace.Traces) {
	if r.tools == nil {
		r.tools, r.agents, r.attrKeys = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	add := func(m map[string]bool) func(string) {
		return func(s string) {
			if len(m) < 1000 {
				m[s] = true
			}
		}
	}
	addKeys := func(a pcommon.Map) {
		for k := range a.All() {
			add(r.attrKeys)(k)
		}
	}
	for _, rs := range td.ResourceSpans().All() {
		addKeys(rs.Resource().Attributes())
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				predicate.NamesOn(sp.Attributes(), add(r.tools), add(r.agents))
				addKeys(sp.Attributes())
			}
		}
	}
}

// attributeKeyRef is an attribute key an OTTL condition reads.
var attributeKeyRef = regexp.MustCompile(`attributes\["((?:[^"\\]|\\.)*)"\]`)

// misspeltKey is the did-you-mean of a condition predicate that never held:
// an attribute key it reads that no span or resource read carried, with
// the nearest key they did carry; "" when every key it reads was seen.
func (r *replayed) misspeltKey(condition string) string {
	keys := slices.Collect(maps.Keys(r.attrKeys))
	for _, m := range attributeKeyRef.FindAllStringSubmatch(condition, -1) {
		key, err := strconv.Unquote(`"` + m[1] + `"`)
		if err != nil || r.attrKeys[key] || len(r.attrKeys) >= 1000 {
			continue
		}
		return fmt.Sprintf("; attribute %q is on no span read%s", key, spelling.DidYouMean(key, keys))
	}
	return ""
}

// noteCaptures reads a trace's calls for the capture paths they hold, and
// its spans for the quantities the budgets read.
func (r *replayed) noteCaptures(td ptrace.Traces) {
	if r.captures == nil && r.quantities == nil {
		return
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				r.captures.Note(sp)
				r.quantities.Note(sp)
			}
		}
	}
}

// misspelt is the did-you-mean of a predicate that never held, from the
// names the spans carried; "" without a literal or a near name.
func (r *replayed) misspelt(lit predicate.Literal, ok bool) string {
	if !ok {
		return ""
	}
	seen := r.agents
	if lit.Tool {
		seen = r.tools
	}
	return spelling.DidYouMean(lit.Name, slices.Collect(maps.Keys(seen)))
}

// noteKeys adds a trace's attribute keys to the candidates of a misspelt
// group_by, while no trace has carried it (at most maxKeys).
func (r *replayed) noteKeys(td ptrace.Traces) {
	const maxKeys = 1000
	if r.grouped || len(r.keys) >= maxKeys {
		return
	}
	if len(r.keys) == 0 {
		r.keys = append(r.keys, sequence.ByConversation)
	}
	add := func(a pcommon.Map) {
		for k := range a.All() {
			if len(r.keys) < maxKeys && !slices.Contains(r.keys, k) {
				r.keys = append(r.keys, k)
			}
		}
	}
	for _, rs := range td.ResourceSpans().All() {
		add(rs.Resource().Attributes())
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				add(sp.Attributes())
			}
		}
	}
}

// oneTrace is the trace ID of a batch of one trace's spans.
func oneTrace(td ptrace.Traces) (pcommon.TraceID, bool) {
	var id pcommon.TraceID
	found := false
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				switch {
				case !found:
					id, found = span.TraceID(), true
				case span.TraceID() != id:
					return id, false
				}
			}
		}
	}
	return id, found
}

// take records the verdicts of one step of the runner over seq.
func (r *replayed) take(vs []assertion.Verdict, seq *sequenceSoFar) {
	waits := map[*texpr.Expr]*texpr.Waits{}
	for _, v := range vs {
		if v.Violation {
			r.violations++
		}
		if v.Kind != texpr.Pending {
			continue
		}
		p := pendingVerdict{Assertion: v.Assertion.Name, Group: v.Group, StartEvent: v.Start, LastEvent: v.End, WaitingFor: []string{}}
		// The cycles are the sequence's when it ended at its last event; a
		// runner that ended it elsewhere leaves only the cycle numbers.
		if seq != nil && v.End == len(seq.events) && v.Start >= 1 && v.Start <= v.End {
			span := seq.events[v.Start-1].Span
			p.TraceID, p.SpanID, p.SpanName = span.TraceID().String(), span.SpanID().String(), span.Name()
			e := v.Assertion.Spec.Expr
			if waits[e] == nil {
				waits[e] = texpr.NewWaits(e, seq.bits, waitsBudget)
			}
			// Waits reads bits alone: what a capture assertion's dicts
			// allowed it cannot tell, so it is left unsaid.
			if ws, ok := waits[e].Of(v.Start); ok && !texpr.UsesCaptures(e, v.Assertion.Spec.Captures) {
				for _, w := range ws {
					p.WaitingFor = append(p.WaitingFor, w.String())
				}
			}
		}
		r.pending = append(r.pending, p)
	}
}

// triggeredBy names an assertion's FIRST predicates.
func (r *replayed) triggeredBy(i int, names []string) []string {
	out := []string{}
	for b, n := range names {
		if r.triggers[i].mask&(1<<uint(b)) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// definition is a predicate as its configuration wrote it, short: what a
// reader compares against the traces when it never held.
func definition(p predicate.Predicate) string {
	switch {
	case p.Set != nil || p.Reset != nil:
		parts := []string{}
		if p.Set != nil {
			parts = append(parts, "set: {"+definition(*p.Set)+"}")
		}
		if p.Reset != nil {
			parts = append(parts, "reset: {"+definition(*p.Reset)+"}")
		}
		return strings.Join(parts, ", ")
	case p.Tool != "":
		return "tool: " + p.Tool + p.FieldsText()
	case p.TransferTo != "":
		return "transfer_to: " + p.TransferTo
	case p.Form() != "":
		return p.Form()
	}
	return "condition: " + p.Condition
}
