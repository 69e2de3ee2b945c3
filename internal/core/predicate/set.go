package predicate

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/ottlfuncs"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
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
	// Telemetry is the component's; its logger reports evaluation errors
	// under error_mode ignore.
	Telemetry component.TelemetrySettings
	// OnError is called with the predicate's name (EventsOwner for the events
	// condition) at every evaluation error, to count it. May be nil.
	OnError func(predicate string, err error)
}

// Set is the compiled predicates of a processor, built once at start. Eval
// may be called from several goroutines at once; a Latch may not.
type Set struct {
	names    []string
	sources  []string // per predicate, the OTTL it runs
	events   condition
	conds    []condition // stateless conditions, each with its bit
	latches  []latchOp   // in evaluation order: nested latches first
	outMask  uint64      // the predicates' bits
	silent   bool
	logger   *zap.Logger
	onError  func(string, error)
	evalCtx  context.Context
	stateful bool
}

type condition struct {
	owner string // the predicate's name, for errors
	bit   uint
	cond  *ottl.Condition[*ottlspan.TransformContext]
}

// Compile checks cfg and compiles it. Errors name the predicate and carry
// OTTL's own message (which quotes the condition and shows where it broke).
func Compile(cfg Config, set Settings) (*Set, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	parser, err := ottlspan.NewParser(ottlfuncs.StandardConverters[*ottlspan.TransformContext](),
		set.Telemetry, ottlspan.EnablePathContextNames())
	if err != nil {
		return nil, fmt.Errorf("OTTL parser: %w", err)
	}
	logger := set.Telemetry.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	s := &Set{
		silent: cfg.ErrorMode == ottl.SilentError, logger: logger, onError: set.OnError,
		evalCtx: context.Background(), outMask: lowBits(len(cfg.Predicates)),
	}
	b := builder{set: s, parser: &parser, next: uint(len(cfg.Predicates))}
	events := Predicate{Condition: DefaultEvents}
	if cfg.Events != nil {
		events = *cfg.Events
	}
	if s.events, err = b.parse(EventsOwner, events.OTTL(), 0); err != nil {
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
	s.stateful = len(s.latches) > 0
	return s, nil
}

// builder assigns bits and parses conditions.
type builder struct {
	set    *Set
	parser *ottl.Parser[*ottlspan.TransformContext]
	next   uint // the next free bit above the predicates' own
	errs   []error
}

// add compiles predicate p of the given name onto bit out.
func (b *builder) add(name string, p *Predicate, out uint) {
	if !p.latched() {
		c, err := b.parse(name, p.OTTL(), out)
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
	b.set.latches = append(b.set.latches, op) // after the latches it reads
}

func (b *builder) alloc() uint {
	bit := b.next
	b.next++
	return bit
}

func (b *builder) parse(owner, src string, bit uint) (condition, error) {
	c, err := b.parser.ParseCondition(src)
	if err != nil {
		if owner == EventsOwner {
			return condition{}, fmt.Errorf("events condition: %w", err)
		}
		return condition{}, fmt.Errorf("predicate %q: %w", owner, err)
	}
	return condition{owner: owner, bit: bit, cond: c}, nil
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
// of the predicates there. A span that is not an event gets no predicate
// evaluated: predicates only matter at events. An evaluation error makes its
// condition false at this span; it is counted through OnError, never fatal.
func (s *Set) Eval(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) (isEvent bool, sig Signals) {
	tCtx := ottlspan.NewTransformContext(rs, ss, span)
	defer tCtx.Close()
	if !s.holds(&s.events, tCtx) {
		return false, 0
	}
	for i := range s.conds {
		if s.holds(&s.conds[i], tCtx) {
			sig |= 1 << s.conds[i].bit
		}
	}
	return true, sig
}

func (s *Set) holds(c *condition, tCtx *ottlspan.TransformContext) bool {
	ok, err := c.cond.Eval(s.evalCtx, tCtx)
	if err == nil {
		return ok
	}
	if s.onError != nil {
		s.onError(c.owner, err)
	}
	if !s.silent {
		s.logger.Warn("predicate evaluation failed; it is false at this span",
			zap.String("predicate", c.owner), zap.Error(err))
	}
	return false
}

func describe(p *Predicate) string {
	if p.latched() {
		return "latch(set: " + describe(p.Set) + "; reset: " + describe(p.Reset) + ")"
	}
	return p.OTTL()
}

func lowBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}
