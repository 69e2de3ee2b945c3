// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// Bits is the truth of each predicate at one event: bit i for predicate i in
// declaration order.
type Bits uint64

// Has reports whether predicate i holds.
func (b Bits) Has(i int) bool { return b>>uint(i)&1 == 1 }

// Signals is what Set.Eval sees at one span: the stateless predicates' bits
// where Bits has them, and above them the conditions latched predicates read.
// A Latch, stepped in the group's event order, turns Signals into Bits.
type Signals uint64

// EventsOwner is the name OnError gets for an error of the events condition;
// it cannot clash with a predicate's name, which is an identifier.
const EventsOwner = "(events)"

// Settings are what Compile needs from the collector.
type Settings struct {
	// Telemetry is the component's; without OnError, its logger reports the
	// first evaluation error of each predicate under error_mode ignore.
	Telemetry component.TelemetrySettings
	// OnError is called with the predicate's name (EventsOwner for the events
	// condition) at every evaluation error, to count it; the caller then
	// reports errors itself, and the Set logs nothing. May be nil.
	OnError func(predicate string, err error)
}

// Set is the compiled predicates of a processor, built once at start. It is
// not safe for concurrent use, its ParseJSON remembering results
// (jsonmemo.go): compile one per goroutine. Nor is a Latch.
type Set struct {
	names    []string
	sources  []string // per predicate, the OTTL it runs
	events   condition
	conds    []condition // stateless conditions, each with its bit
	plan     latchPlan   // the latches and meters every group steps (latch.go)
	silent   bool
	logger   *zap.Logger
	logged   map[string]bool // predicates whose failure was logged (no onError)
	onError  func(string, error)
	evalCtx  context.Context
	stateful bool
	facts    bool // some condition runs natively: gather spanFacts
	// factsFirst: something before the events' verdict reads the facts
	// (an agent predicate, a meter, a native events condition)
	factsFirst bool
	agents     bool // some native condition is an agent's: gather its facts too
	control    bool // some condition is an agent predicate's: it makes events
	ottl       bool // some condition runs OTTL: make a TransformContext
	memo       *jsonMemo
	compiled   *compiledReads // the compiled conditions' reads (ottlcompile.go); nil when none
	// capture predicates: their specs by bit (nil when there are none)
	captureSpecs []*fieldSpec
}

type condition struct {
	owner  string // the predicate's name, for errors
	bit    uint
	cond   *ottl.Condition[*ottlspan.TransformContext]
	native *native // when set, runs instead of cond (same meaning, faster)
	// compiled, when set, runs before cond, which runs only where it
	// declines (ottlcompile.go)
	compiled *cnode
	// evaluation, when set, is the condition: an evaluation predicate's
	// (span events, which OTTL's span context does not read)
	evaluation *evaluationMatch
	control    bool // an agent predicate's: where it holds is an event
	fields     *fieldSpec
}

// Compile checks cfg and compiles it. Errors name the predicate and carry
// OTTL's own message (which quotes the condition and shows where it broke).
func Compile(cfg Config, set Settings) (*Set, error) {
	return compile(cfg, set, true)
}

// compile with native false runs every condition through OTTL: the tests
// compare the two ways.
func compile(cfg Config, set Settings, native bool) (*Set, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	memo, err := newJSONMemo() // ParseJSON memoised: jsonmemo.go
	if err != nil {
		return nil, fmt.Errorf("OTTL parser: %w", err)
	}
	parser, err := ottlspan.NewParser(memo.converters(), set.Telemetry, ottlspan.EnablePathContextNames())
	if err != nil {
		return nil, fmt.Errorf("OTTL parser: %w", err)
	}
	logger := set.Telemetry.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	s := &Set{
		silent: cfg.ErrorMode == ottl.SilentError, logger: logger, onError: set.OnError,
		evalCtx: context.Background(), plan: latchPlan{outMask: lowBits(len(cfg.Predicates))}, memo: memo,
	}
	b := builder{set: s, parser: &parser, next: uint(len(cfg.Predicates)), native: native}
	events := Predicate{Condition: DefaultEvents}
	if cfg.Events != nil {
		events = *cfg.Events
	}
	if s.events, err = b.parse(EventsOwner, &events, 0); err != nil {
		b.errs = append(b.errs, err)
	}
	for i, p := range cfg.Predicates {
		s.names = append(s.names, p.Name)
		s.sources = append(s.sources, describe(&p.Predicate))
		b.add(p.Name, &p.Predicate, uint(i))
	}
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	if b.plan.slots > 0 {
		s.compiled = newCompiledReads(b.plan)
	}
	s.stateful = len(s.plan.ops) > 0 || len(s.plan.meters) > 0
	s.facts = len(s.plan.meters) > 0
	for _, c := range append(s.conds, s.events) {
		s.facts = s.facts || c.native != nil || c.fields != nil
		if c.fields.dict() {
			if s.captureSpecs == nil {
				s.captureSpecs = make([]*fieldSpec, len(cfg.Predicates))
			}
			s.captureSpecs[c.bit] = c.fields
		}
		s.agents = s.agents || (c.native != nil && c.native.kind == nativeAgent)
		s.ottl = s.ottl || (c.native == nil && c.evaluation == nil)
	}
	for _, c := range s.conds {
		s.control = s.control || c.control
	}
	s.factsFirst = s.facts && (s.control || len(s.plan.meters) > 0 || s.events.native != nil || s.events.fields != nil)
	return s, nil
}

// builder assigns bits and parses conditions.
type builder struct {
	set    *Set
	parser *ottl.Parser[*ottlspan.TransformContext]
	next   uint // the next free bit above the predicates' own
	native bool // run shorthands natively, and compile the OTTL it can
	plan   readPlan
	errs   []error
}

// add compiles predicate p of the given name onto bit out.
func (b *builder) add(name string, p *Predicate, out uint) {
	if p.meter() {
		op, err := b.set.meterOpOf(name, p, out)
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("predicate %q: %w", name, err))
			return
		}
		b.set.plan.meters = append(b.set.plan.meters, *op)
		return
	}
	if !p.latched() {
		c, err := b.parse(name, p, out)
		if err != nil {
			b.errs = append(b.errs, err)
			return
		}
		b.set.conds = append(b.set.conds, c)
		return
	}
	op := latchOp{set: b.alloc(), reset: b.alloc(), out: out}
	b.add(name, p.Set, op.set)
	b.add(name, p.Reset, op.reset)
	b.set.plan.ops = append(b.set.plan.ops, op) // after the latches it reads
}

func (b *builder) alloc() uint {
	bit := b.next
	b.next++
	return bit
}

// parse compiles a stateless predicate. The OTTL of a shorthand is parsed
// too, although the native matcher runs: it is what the docs show.
func (b *builder) parse(owner string, p *Predicate, bit uint) (condition, error) {
	if p.Evaluation != nil {
		return condition{owner: owner, bit: bit, control: true, evaluation: newEvaluationMatch(p.Evaluation)}, nil
	}
	c, err := b.parser.ParseCondition(p.OTTL())
	if err != nil {
		if owner == EventsOwner {
			return condition{}, fmt.Errorf("events condition: %w", err)
		}
		return condition{}, fmt.Errorf("predicate %q: %w", owner, err)
	}
	cond := condition{owner: owner, bit: bit, cond: c, control: p.Agent != "", fields: newFieldSpec(p)}
	if b.native {
		cond.native = nativeFor(p)
		if cond.native == nil && cond.fields == nil {
			cond.compiled = compileOTTL(p.OTTL(), &b.plan)
		}
	}
	return cond, nil
}

// nativeFor is the native matcher of a shorthand or of the default events
// condition; nil for any other OTTL.
func nativeFor(p *Predicate) *native {
	switch {
	case IsGlob(p.Tool) || IsGlob(p.TransferTo) || IsGlob(p.Agent):
		return nil // a glob runs as its OTTL (IsMatch)
	case p.Tool != "":
		return toolMatcher(p.Tool, p.Failed)
	case p.TransferTo != "":
		return transferMatcher(p.TransferTo, p.Failed)
	case p.Agent != "":
		return agentMatcher(p.Agent)
	case p.Condition == DefaultEvents:
		return defaultEventsMatcher
	}
	return nil
}

// Names are the predicates' names in declaration order (bit order).
func (s *Set) Names() []string { return s.names }

// OTTL is the OTTL predicate i runs, for docs and debug logs; a latched
// predicate's reads `latch(set: <ottl>; reset: <ottl>)`.
func (s *Set) OTTL(i int) string { return s.sources[i] }

// Stateful reports whether some predicate is latched, that is whether Bits
// depend on earlier events (through a Latch) and not on the span alone.
func (s *Set) Stateful() bool { return s.stateful }

// Eval tells whether the span is a sampling event and, if it is, the signals
// of the predicates there. A span is an event where the events condition
// holds, or where an agent predicate (at any depth of a latch) holds: an
// agent taking control is something to check the order of, whatever events
// selects, and a configuration without agent predicates sees exactly the
// events it saw before they existed. A span that is not an event gets no
// other predicate evaluated: predicates only matter at events. An
// evaluation error makes its condition false at this span; it is counted
// through OnError, never fatal.
func (s *Set) Eval(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) (isEvent bool, sig Signals) {
	r := s.read(rs, ss, span, false)
	return r.IsEvent && !r.Silent, r.Signals
}

// Reading is what the predicates find at one span.
type Reading struct {
	// IsEvent: the span is an event, or (Silent) a span the meters read
	// that is kept until the fold decides whether a meter holds there.
	IsEvent, Silent bool
	Signals         Signals
	// Captured is what the capture predicates read (nil when none holds or
	// the caller did not ask), Measured what the meters read (nil: nothing).
	Captured *Captured
	Measured *Measurement
}

// Read is Eval with what the capture predicates and the meters read there.
func (s *Set) Read(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) Reading {
	return s.read(rs, ss, span, true)
}

// HasMeters reports whether some predicate is a meter: Read then keeps
// silent events, which the caller drops after the fold where no meter
// holds (MeterBits).
func (s *Set) HasMeters() bool { return len(s.plan.meters) > 0 }

// Captures are the bits of the capture predicates (Config.Captures).
func (s *Set) Captures() uint64 {
	var mask uint64
	for i, fs := range s.captureSpecs {
		if fs != nil {
			mask |= 1 << uint(i)
		}
	}
	return mask
}

// EvalCaptured is Eval that also returns what the capture predicates that
// hold at the span read there (nil when none holds), from the same parse
// of the span's JSON.
func (s *Set) EvalCaptured(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) (bool, Signals, *Captured) {
	r := s.read(rs, ss, span, true)
	return r.IsEvent && !r.Silent, r.Signals, r.Captured
}

func (s *Set) read(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, all bool) Reading {
	ev := s.newEvaluation(rs, ss, span)
	defer ev.close()
	var r Reading
	r.IsEvent, r.Signals = ev.eval()
	switch {
	case !all || len(s.plan.meters) == 0 || (!r.IsEvent && deniedByHook(span)):
	case r.IsEvent:
		r.Measured = ev.measure(true)
	default:
		r.Measured = ev.measure(false)
		r.IsEvent, r.Silent = r.Measured != nil, r.Measured != nil
	}
	if all && r.IsEvent && !r.Silent && s.captureSpecs != nil {
		r.Captured = ev.captured(r.Signals)
	}
	return r
}

func (ev *evaluation) eval() (isEvent bool, sig Signals) {
	s := ev.set
	span := ev.span
	// The facts are gathered from every attribute: where only events need
	// them, a span that is not one is spared it.
	if s.factsFirst {
		ev.facts.gather(span, s.agents)
	}
	isEvent = ev.holds(&s.events)
	if s.control {
		// Agent predicates run at every span: they decide events too.
		for i := range s.conds {
			if c := &s.conds[i]; c.control && ev.holds(c) {
				sig |= 1 << c.bit
				isEvent = true
			}
		}
	}
	if !isEvent || deniedByHook(span) {
		return false, 0
	}
	if s.facts && !s.factsFirst {
		ev.facts.gather(span, s.agents)
	}
	for i := range s.conds {
		if c := &s.conds[i]; !c.control && ev.holds(c) {
			sig |= 1 << c.bit
		}
	}
	return true, sig
}

// DecisionAttribute is the span attribute through which an agent's pre-call
// hook says that it refused the call the span records: some frameworks
// (the OpenAI Agents SDK's tool guardrails and redirected hand-offs) still
// record a span for a call that never ran.
const DecisionAttribute = "agentguard.decision"

// deniedByHook: the span records a call its agent's hook denied
// (DecisionAttribute "deny"). It did not happen, so it is not an event: an
// assertion must see what the agent did, not what it was kept from doing.
// Read only at events, which are few.
func deniedByHook(span ptrace.Span) bool {
	v, ok := span.Attributes().Get(DecisionAttribute)
	return ok && v.Str() == "deny"
}

// captured reads the values of the capture predicates that hold.
func (ev *evaluation) captured(sig Signals) *Captured {
	var c *Captured
	for bit, fs := range ev.set.captureSpecs {
		if fs == nil || sig&(1<<uint(bit)) == 0 {
			continue
		}
		if c == nil {
			c = &Captured{specs: ev.set.captureSpecs, vals: make([][]texpr.Value, len(ev.set.captureSpecs))}
		}
		c.vals[bit] = fs.values(ev)
	}
	return c
}

// evaluation is one span's: its facts, and its OTTL context once one is
// needed.
type evaluation struct {
	set   *Set
	rs    ptrace.ResourceSpans
	ss    ptrace.ScopeSpans
	span  ptrace.Span
	facts spanFacts
	tCtx  *ottlspan.TransformContext
	// the call's arguments and result, read once (call.go)
	args, result callValue
}

func (s *Set) newEvaluation(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) evaluation {
	if s.compiled != nil {
		s.compiled.reset()
	}
	return evaluation{set: s, rs: rs, ss: ss, span: span}
}

func (ev *evaluation) holds(c *condition) bool {
	if c.fields != nil {
		return ev.base(c) && c.fields.match(ev)
	}
	return ev.base(c)
}

func (ev *evaluation) base(c *condition) bool {
	if c.evaluation != nil {
		return c.evaluation.match(ev.span)
	}
	if c.native != nil {
		return c.native.match(&ev.facts)
	}
	if c.compiled != nil {
		if ok, sure := ev.evalCompiled(c.compiled); sure {
			return ok
		}
	}
	if ev.tCtx == nil {
		ev.tCtx = ottlspan.NewTransformContext(ev.rs, ev.ss, ev.span)
	}
	ok, err := c.cond.Eval(ev.set.evalCtx, ev.tCtx)
	if err != nil {
		ev.set.failed(c, err)
		return false
	}
	return ok
}

// close gives the OTTL context back to its pool, once: a context closed
// twice would be handed to two evaluations at the same time.
func (ev *evaluation) close() {
	if ev.tCtx != nil {
		ev.tCtx.Close()
		ev.tCtx = nil
	}
}

func (s *Set) failed(c *condition, err error) {
	if s.onError != nil {
		s.onError(c.owner, err)
		return
	}
	if s.silent || s.logged[c.owner] {
		return
	}
	if s.logged == nil {
		s.logged = map[string]bool{}
	}
	s.logged[c.owner] = true
	s.logger.Warn("predicate evaluation failed; it is false at this span (logged once per predicate)",
		zap.String("predicate", c.owner), zap.Error(err))
}

func describe(p *Predicate) string {
	if p.meter() {
		return p.describeMeter()
	}
	if p.Evaluation != nil {
		return p.Evaluation.String()
	}
	if p.latched() {
		return "latch(set: " + describe(p.Set) + "; reset: " + describe(p.Reset) + ")"
	}
	return p.OTTL() + p.FieldsText()
}

func lowBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}
