// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// Event is one sampling event of a group's sequence.
type Event struct {
	Bits uint64      // predicate truth, bit i for predicate i
	Time int64       // the span's start, unix nanoseconds
	Name string      // the span's name, for explanations
	Span ptrace.Span // the span, while the caller still holds it
	// Captures are what the capture predicates do at this event
	// (events.Source sets them on sequence.Event); nil without them.
	Captures texpr.Captures
}

// Verdict is a verdict of one assertion in one group.
type Verdict struct {
	texpr.Verdict
	Assertion *Compiled
	Group     string
	// Span is the span of the event that decided the verdict; Attached is
	// false when that span has already left (a group finished after its
	// last trace was released).
	Span        ptrace.Span
	Attached    bool
	Explanation string
	// History is the mark of a verdict decided on a group history that may
	// be incomplete (verdictattr.History's values); "" when it is complete.
	History string
}

// Options tune a Runner.
type Options struct {
	// Passes also reports the verdicts that satisfy an assertion.
	Passes bool
	// MaxEventsPerGroup finishes a group's sequence (applying on_end) when it
	// reaches this many events, and starts a new one: it bounds memory.
	MaxEventsPerGroup int
	// Captures are the bits of the capture predicates
	// (predicate.Config.Captures): an assertion naming one evaluates with a
	// capture dict per thread.
	Captures uint64
}

// Runner runs the assertions over groups. A group's state is a Group, which
// the caller owns (one per open group; the temporalcheck processor keeps them
// per worker); Run, Finish and Keys keep them in a map for callers that do
// not.
type Runner struct {
	assertions []Compiled
	opts       Options
	groups     map[string]*Group
	// unreplayable are the assertions over capture predicates: a replay of a
	// group's bits (a checkpoint's restore, a question) cannot bind their
	// captures again.
	unreplayable []*Compiled
}

// Group is the state of one open group: the assertions' monitors and the
// names and times of its events, for explanations. It is not safe for
// concurrent use.
type Group struct {
	monitors []texpr.Monitor
	events   []eventInfo // cycle c is events[c-1]
	// endedAt: the group ended after this many events and was taken up
	// again (resumed.go); 0 if not. decidedAtEnd are the evaluations that
	// end decided, whose later verdicts are not reported again.
	endedAt      int
	decidedAtEnd []evaluation
	// scratch: a question's group (NewScratch), replayed again and again,
	// whose monitors keep what they need while running, so that a question
	// allocates nothing once warm; an open group's monitors rest (rest).
	scratch bool
}

// rest lets g's monitors go without what they keep only while something
// runs or is to be reported, once its verdicts are taken: an open group
// waits for its next event with its history and its live evaluations only.
func (g *Group) rest() {
	if g.scratch {
		return
	}
	for i := range g.monitors {
		g.monitors[i].Rest()
	}
}

type eventInfo struct {
	name string // what the event was, as the caller described it
	time int64
	bits uint64
}

// NewRunner returns a runner of copies of the compiled assertions.
func NewRunner(compiled []Compiled, opts Options) *Runner {
	assertions := slices.Clone(compiled) // the caller's are left as they were
	for i := range assertions {
		assertions[i].Spec.Passes = opts.Passes
		assertions[i].Spec.Captures = opts.Captures
		if opts.Passes {
			assertions[i].Spec.Trees = texpr.TreesAll
		}
		assertions[i].Spec.Compile()
	}
	r := &Runner{assertions: assertions, opts: opts, groups: map[string]*Group{}}
	for i := range assertions {
		if a := &assertions[i].Spec; texpr.UsesCaptures(a.Expr, a.Captures) {
			r.unreplayable = append(r.unreplayable, &assertions[i])
		}
	}
	return r
}

// Assertions are the runner's own compiled assertions: its verdicts'
// Assertion fields point into this slice.
func (r *Runner) Assertions() []Compiled { return r.assertions }

// NewGroup is the state of a group before its first event.
func (r *Runner) NewGroup() *Group {
	g := &Group{monitors: make([]texpr.Monitor, len(r.assertions))}
	for i := range r.assertions {
		g.monitors[i].Init(&r.assertions[i].Spec)
	}
	return g
}

// Step feeds a group its next events, in order, and returns the verdicts
// they decide, each on the span of its deciding event.
func (r *Runner) Step(key string, g *Group, events []Event) []Verdict {
	var out []Verdict
	for _, ev := range events {
		g.events = append(g.events, eventInfo{ev.Name, ev.Time, ev.Bits})
		for i := range g.monitors {
			for _, v := range g.monitors[i].Step(texpr.Event{Bits: ev.Bits, Time: ev.Time, Ref: len(g.events) - 1, Captures: ev.Captures}) {
				if g.reportedAtEnd(i, v) {
					continue
				}
				out = append(out, r.verdict(key, g, i, v, ev.Span, true, false))
			}
		}
		if r.opts.MaxEventsPerGroup > 0 && len(g.events) >= r.opts.MaxEventsPerGroup {
			out = append(out, r.finish(key, g, ev.Span, true)...)
		}
	}
	g.rest() // once the events are in: a monitor between two of them keeps its free evaluations
	return out
}

// End applies the end policy to a group that ends: the verdicts it decides
// have no span yet (Attached is false); the caller places them.
func (r *Runner) End(key string, g *Group) []Verdict {
	return r.finish(key, g, ptrace.Span{}, false)
}

// Len is the number of events of the group's current sequence: the next
// event is its first when Len is 0.
func (g *Group) Len() int { return len(g.events) }

// Groups is the number of groups open in the runner's own map.
func (r *Runner) Groups() int { return len(r.groups) }

// Run feeds a group of the runner's own map the events of one released
// trace, in order. With last, the group ends here: the end policy applies
// and verdicts it decides go to the last event's span.
func (r *Runner) Run(key string, events []Event, last bool) []Verdict {
	g := r.groups[key]
	if g == nil {
		g = r.NewGroup()
		r.groups[key] = g
	}
	out := r.Step(key, g, events)
	if last {
		span, attached := ptrace.Span{}, len(events) > 0
		if attached {
			span = events[len(events)-1].Span
		}
		out = append(out, r.finish(key, g, span, attached)...)
		delete(r.groups, key)
	}
	return out
}

// Finish ends a group of the runner's own map whose spans have all left:
// its end-of-sequence verdicts cannot be attached to a span.
func (r *Runner) Finish(key string) []Verdict {
	g := r.groups[key]
	if g == nil {
		return nil
	}
	delete(r.groups, key)
	return r.End(key, g)
}

// Keys lists the open groups of the runner's own map.
func (r *Runner) Keys() []string {
	keys := make([]string, 0, len(r.groups))
	for k := range r.groups {
		keys = append(keys, k)
	}
	return keys
}

func (r *Runner) finish(key string, g *Group, span ptrace.Span, attached bool) []Verdict {
	var out []Verdict
	for i := range g.monitors {
		for _, v := range g.monitors[i].Finish() {
			if g.reportedAtEnd(i, v) {
				continue
			}
			out = append(out, r.verdict(key, g, i, v, span, attached, true))
		}
	}
	g.rest()
	g.events, g.endedAt, g.decidedAtEnd = g.events[:0], 0, nil
	return out
}

// verdict wraps a monitor's verdict. The explanation is written only for the
// verdicts someone reads: violations, passes when asked for, and the
// unattached ones, which can only be logged.
func (r *Runner) verdict(key string, g *Group, i int, v texpr.Verdict, span ptrace.Span, attached, atEnd bool) Verdict {
	a := &r.assertions[i]
	out := Verdict{Verdict: v, Assertion: a, Group: key, Span: span, Attached: attached}
	if v.Violation || r.opts.Passes || !attached {
		out.Explanation = explain(a, g, v, atEnd)
	}
	return out
}

// maxListed bounds the event list of an explanation.
const maxListed = 40

// waitsBudget bounds the replay that tells what an evaluation expected.
const waitsBudget = 1 << 16

// explain is the text a person reads: what was asserted, what happened, one
// sentence of what was expected and what came instead, the trace tree (times
// in ms since the group's first event), and the events, each with what it
// was and the predicates that held there.
func explain(a *Compiled, g *Group, v texpr.Verdict, atEnd bool) string {
	var b strings.Builder
	b.Grow(explainBytes(v)) // one allocation for most explanations, not one per doubling
	if a.Pattern != "" {
		fmt.Fprintf(&b, "%s: %s, that is %s %s (on_end: %s): %s\nThe pattern means: %s.\n", a.Name, a.Pattern, a.Kind, a.Expression,
			a.Spec.OnEnd, describe(v), a.Meaning)
	} else {
		fmt.Fprintf(&b, "%s: %s %s: %s\n", a.Name, a.Kind, a.Expression, describe(v))
	}
	if v.Kind == texpr.Error {
		return b.String()
	}
	if s := expectation(a, g, v, atEnd); s != "" {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	if v.Kind == texpr.Pending {
		return b.String()
	}
	origin := g.events[0].time
	ms := func(c int) int64 { return (g.events[c-1].time - origin) / 1e6 }
	for _, t := range v.Trees {
		t.FormatTo(&b, ms)
	}
	if v.Trees == nil && v.TreeNote != "" {
		b.WriteString(v.TreeNote + "\n")
	}
	b.WriteString("events (cycle, ms since the first event, what it was [predicates that held]):\n")
	for c := v.Start; c <= v.End && c < v.Start+maxListed; c++ {
		b.WriteString("  ")
		b.WriteString(strconv.Itoa(c))
		b.WriteString(" +")
		b.WriteString(strconv.FormatInt(ms(c), 10))
		b.WriteString("ms ")
		writeEvent(&b, a, g.events[c-1])
		b.WriteByte('\n')
	}
	if v.End >= v.Start+maxListed {
		fmt.Fprintf(&b, "  ... %d more\n", v.End-v.Start-maxListed+1)
	}
	return b.String()
}

// explainBytes is about the length of an explanation: a header and an
// expectation, the trees, and a line per listed event.
func explainBytes(v texpr.Verdict) int {
	listed := min(v.End-v.Start+1, maxListed)
	return 512 + 256*len(v.Trees) + 96*max(listed, 0)
}

// writeEvent writes an event as a reader needs it: what it was and the
// predicates that held there.
func writeEvent(b *strings.Builder, a *Compiled, ev eventInfo) {
	b.WriteString(ev.name)
	b.WriteByte(' ')
	writeHeld(b, a, ev.bits)
}

func heldText(a *Compiled, bits uint64) string {
	var b strings.Builder
	writeHeld(&b, a, bits)
	return b.String()
}

// writeHeld writes the predicates that held, as [a b]; a capture
// predicate, whose span-local part held, with a ?: whether it held under an
// evaluation's dict is in the trace tree.
func writeHeld(b *strings.Builder, a *Compiled, bits uint64) {
	b.WriteByte('[')
	first := true
	for i, name := range a.Predicates {
		if bits&(1<<i) == 0 {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		if a.Spec.Captures&(1<<i) != 0 {
			b.WriteByte('?')
		}
		first = false
	}
	b.WriteByte(']')
}

// expectation says in one sentence what the evaluation expected and what
// came instead; "" when there is nothing more to say than the verdict.
func expectation(a *Compiled, g *Group, v texpr.Verdict, atEnd bool) string {
	switch {
	case v.Kind == texpr.Match && v.Violation: // never
		return fmt.Sprintf("It must never happen, and it did: from event %d (%s) to event %d (%s).",
			v.Start, g.events[v.Start-1].name, v.End, g.events[v.End-1].name)
	case v.Kind == texpr.Pending:
		if w := expected(a, g, v.Start, len(g.events)); w != "" {
			return fmt.Sprintf("Still waiting for %s when the group ended after event %d.", w, len(g.events))
		}
	case v.Kind == texpr.Failure && atEnd:
		if w := expected(a, g, v.Start, len(g.events)); w != "" {
			return fmt.Sprintf("Expected %s after event %d; the group ended instead.", w, len(g.events))
		}
	case v.Kind == texpr.Failure:
		came := g.events[v.End-1]
		w := "the expression to begin"
		if v.End > v.Start {
			w = expected(a, g, v.Start, v.End-1)
		}
		if w == "" {
			w = "something else"
		}
		return fmt.Sprintf("Expected %s at event %d; came %s %s.", w, v.End, came.name, heldText(a, came.bits))
	}
	return ""
}

// expected is what the evaluation started at start was waiting for once
// event last had come, as expression text ("a or b"); "" when that cannot be
// told within the budget.
func expected(a *Compiled, g *Group, start, last int) string {
	if texpr.UsesCaptures(a.Spec.Expr, a.Spec.Captures) {
		return "" // Waits reads bits alone: it cannot tell what a dict allowed
	}
	bits := make([]uint64, last)
	for i := range bits {
		bits[i] = g.events[i].bits
	}
	waits, ok := texpr.NewWaits(a.Spec.Expr, bits, waitsBudget).Of(start)
	if !ok || len(waits) == 0 {
		return ""
	}
	texts := make([]string, len(waits))
	for i, w := range waits {
		texts[i] = w.String()
	}
	return strings.Join(texts, " or ")
}

func describe(v texpr.Verdict) string {
	switch v.Kind {
	case texpr.Match:
		return fmt.Sprintf("MATCH from event %d to %d", v.Start, v.End)
	case texpr.Failure:
		return fmt.Sprintf("FAILURE from event %d to %d", v.Start, v.End)
	case texpr.Pending:
		return fmt.Sprintf("PENDING from event %d: still waiting when the sequence ended", v.Start)
	}
	return "ERROR: " + v.TreeNote
}
