// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/spelling"
)

// A misspelt tool or agent name makes a predicate that never holds, and
// every assertion over it passes untested; so does a capture path no call
// holds (the capture never binds); a misspelt group_by attribute makes
// every trace a group of its own. None is an error anyone sees. typoWatch
// looks once, Config.WarnTyposAfter into the traffic: each predicate that
// has not held once, each capture path absent from every call of its tool,
// and a group_by attribute no trace carried, is logged at WARN and counted
// (suspected_typos), with the nearest of the names the spans did carry
// (tool and agent names, the paths of the calls' fields, attribute keys).
// Until then the workers note those names, a bounded set.
type typoWatch struct {
	after      time.Duration
	literals   map[string]predicate.Literal
	groupBy    string
	first      atomic.Int64 // unix nanoseconds of the first event judged; 0: none yet
	done       atomic.Bool
	grouped    atomic.Bool // a trace carried the group_by attribute
	mu         sync.Mutex
	tools      names
	agents     names
	keys       names
	captures   *predicate.CaptureWatch  // nil: no capture predicate
	quantities *predicate.QuantityWatch // nil: no budget over an attribute
	// flushed is, per worker, the time of the last batch whose held
	// predicates it flushed (unix nanoseconds): the look waits until every
	// worker has flushed past the first WarnTyposAfter, or a predicate
	// another worker saw hold, still in its tally, would be warned about.
	flushed []atomic.Int64
}

// maxNames bounds each set of names noted.
const maxNames = 1000

type names map[string]struct{}

func (n names) add(s string) {
	if s != "" && len(n) < maxNames {
		n[s] = struct{}{}
	}
}

func newTypoWatch(cfg Config, workers int) *typoWatch {
	t := &typoWatch{after: cfg.WarnTyposAfter, literals: cfg.Literals, groupBy: cfg.GroupBy,
		tools: names{}, agents: names{}, keys: names{}, flushed: make([]atomic.Int64, workers)}
	if t.after > 0 {
		t.captures = predicate.NewCaptureWatch(cfg.Literals)
		t.quantities = predicate.NewQuantityWatch(cfg.Literals)
	}
	return t
}

// carried notes that a trace carried the group_by attribute.
func (t *typoWatch) carried() {
	if !t.grouped.Load() {
		t.grouped.Store(true)
	}
}

// watching: the look is still to come.
func (t *typoWatch) watching() bool { return t.after > 0 && !t.done.Load() }

// note takes the tool and agent names of a batch of spans that had events
// (an agent is named on its own spans, not only on its calls), and their
// attribute keys while no trace has carried the group_by attribute. Names
// are taken only while a predicate over one has not held: they are what a
// warning about it would suggest.
func (t *typoWatch) note(now time.Time, td ptrace.Traces, events int, held *predicateWatch) {
	if !t.watching() || events == 0 {
		return
	}
	t.first.CompareAndSwap(0, now.UnixNano())
	keys := !t.grouped.Load() && t.groupBy != sequence.ByTraceID
	names := t.nameUnheld(held)
	if !keys && !names && t.captures == nil && t.quantities == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rs := range td.ResourceSpans().All() {
		if keys {
			t.noteKeys(rs.Resource().Attributes())
		}
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if names {
					t.noteNames(sp.Attributes())
				}
				t.captures.Note(sp)
				t.quantities.Note(sp)
				if keys {
					t.noteKeys(sp.Attributes())
				}
			}
		}
	}
}

// nameUnheld: a predicate over a tool or agent name, one look would warn
// about, has not held yet.
func (t *typoWatch) nameUnheld(held *predicateWatch) bool {
	for i, name := range held.names {
		if _, named := t.literals[name]; named && !held.optional[name] && held.lastHeld[i].Load() == 0 {
			return true
		}
	}
	return false
}

func (t *typoWatch) noteNames(a pcommon.Map) {
	predicate.NamesOn(a, t.tools.add, t.agents.add)
}

func (t *typoWatch) noteKeys(a pcommon.Map) {
	for k := range a.All() {
		t.keys.add(k)
	}
}

// look warns, once, after the first WarnTyposAfter of traffic, about each
// predicate that never held and a group_by attribute never seen. worker has
// just flushed its tally, at now.
func (t *typoWatch) look(ctx context.Context, worker int, now time.Time, w *predicateWatch, tel metric.Int64Counter, warnings *Warnings) {
	if !t.watching() {
		return
	}
	t.flushed[worker].Store(now.UnixNano())
	first := t.first.Load()
	if first == 0 || !t.everyWorkerFlushed(first+int64(t.after)) || !t.done.CompareAndSwap(false, true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// A capture that never binds explains its predicate's never holding:
	// that warning, with the path's did-you-mean, replaces the predicate's.
	explained := map[string]bool{}
	for _, c := range t.captures.Suspects() {
		explained[c.Predicate] = true
		if w.optional[c.Predicate] {
			continue
		}
		tel.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrSuspect, kindCapture)))
		warnings.Once("capture-never-present-"+c.Predicate+"-"+c.From, fmt.Sprintf("predicate %s captures %s, absent from all %d calls of %s in the first %v of traffic: the capture never binds, so the predicate never holds and assertions over it pass untested%s",
			c.Predicate, c.From, c.Calls, c.Tool, t.after, spelling.DidYouMean(c.From, c.Seen)), zap.String("predicate", c.Predicate), zap.String("capture", c.From))
	}
	for _, q := range t.quantities.Suspects() {
		tel.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrSuspect, kindBudget)))
		warnings.Once("budget-never-read-"+q.Predicate, fmt.Sprintf("predicate %s: no span in the first %v of traffic carried %s, so the budget never adds anything and cannot hold; check the attribute key%s",
			q.Predicate, t.after, q.Quantity, spelling.DidYouMean(q.Quantity, q.Seen)), zap.String("predicate", q.Predicate))
	}
	for i, name := range w.names {
		if w.lastHeld[i].Load() != 0 || w.optional[name] || explained[name] {
			continue
		}
		tel.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrSuspect, kindPredicate)))
		warnings.Once("never-held-"+name, fmt.Sprintf("predicate %s has not held once in the first %v of traffic: assertions over it pass untested; check its name and convention%s",
			name, t.after, t.suggestion(name)), zap.String("predicate", name))
	}
	if t.groupBy != sequence.ByTraceID && !t.grouped.Load() {
		tel.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrSuspect, kindGroupBy)))
		t.keys.add(sequence.ByConversation) // the keyword is a candidate too
		warnings.Once("group-by-never-seen", fmt.Sprintf("group_by %q: no trace carried it in the first %v of traffic, so every trace is a group of its own%s",
			t.groupBy, t.after, didYouMean(t.groupBy, t.keys)))
	}
}

// everyWorkerFlushed: every worker flushed its tally at or after the
// instant at (unix nanoseconds).
func (t *typoWatch) everyWorkerFlushed(at int64) bool {
	for i := range t.flushed {
		if t.flushed[i].Load() < at {
			return false
		}
	}
	return true
}

// suggestion is ": did you mean X?" for a predicate's literal, or "".
func (t *typoWatch) suggestion(pred string) string {
	lit, ok := t.literals[pred]
	if !ok {
		return ""
	}
	if lit.Tool {
		return didYouMean(lit.Name, t.tools)
	}
	return didYouMean(lit.Name, t.agents)
}

// The values of AttrSuspect.
const (
	kindPredicate = "predicate"
	kindGroupBy   = "group_by"
	kindCapture   = "capture"
	kindBudget    = "budget"
)

// didYouMean is spelling.DidYouMean over a set of names.
func didYouMean(want string, seen names) string {
	return spelling.DidYouMean(want, slices.Collect(maps.Keys(seen)))
}
