// SPDX-License-Identifier: Apache-2.0

// Package predicate compiles the predicates users declare (OTTL conditions or
// shorthands for tool calls, agent transfers and agents taking control) into
// a Set that tells, for one span, whether it is a sampling event and which
// predicates hold there. Describe names what a span was, for explanations.
//
// In collector YAML:
//
//	predicates:
//	  - name: sayHello
//	    tool: say_hello                  # a tool call, in any convention
//	  - name: helloFailed
//	    tool: say_hello                  # ... that failed (false: that succeeded)
//	    failed: true
//	  - name: secureFetch
//	    tool: fetch                      # ... whose arguments' url matches (result: the same for its result)
//	    args: {url: '^https://'}
//	  - name: askCity
//	    tool: get_weather                # binds city in the capture dict (a capture predicate)
//	    capture: {city: args.city}
//	  - name: sameCity
//	    tool: get_weather                # ... holds where city is the one bound
//	    args: {city: {captured: city}}
//	  - name: xferToGreeting
//	    transfer_to: greeting_agent      # a transfer/handoff to that agent that did not fail
//	  - name: greetingRuns
//	    agent: greeting_agent            # that agent takes control (an event of its own)
//	  - name: slow
//	    condition: 'span.end_time_unix_nano - span.start_time_unix_nano > 5000000000'
//	  - name: inGreeting                 # latched: from a set event until a reset event
//	    set: {transfer_to: greeting_agent}
//	    reset: 'span.attributes["gen_ai.tool.name"] == "say_goodbye"'
//	events: 'span.attributes["gen_ai.operation.name"] == "execute_tool"'  # optional
//	error_mode: ignore                   # or silent
package predicate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
)

// MaxBits bounds the condition bits of a Set: one per predicate, plus one per
// stateless set or reset condition of a latched predicate, plus one per latch
// nested inside another. Bits are a uint64 so that a predicate check on the
// hot path is a shift and a mask.
const MaxBits = 64

// Predicate is one predicate as a user writes it: either an OTTL condition
// (written as a bare string, or under the key condition), or exactly one
// shorthand: tool, transfer_to, agent, or the latched pair set and reset.
// Failed narrows tool and transfer_to.
type Predicate struct {
	// Condition is an OTTL condition over a span, its resource and scope
	// (paths need the span., resource. or scope. prefix).
	Condition string `mapstructure:"condition"`
	// Tool is a tool name: the predicate holds at a call of that tool.
	Tool string `mapstructure:"tool"`
	// TransferTo is an agent name: the predicate holds at a transfer (handoff,
	// delegation) to that agent, one that did not fail unless Failed is true.
	TransferTo string `mapstructure:"transfer_to"`
	// Agent is an agent name: the predicate holds where that agent takes
	// control, that is where a run of it starts (AgentCondition). A span
	// where an agent predicate holds is an event even if Config.Events does
	// not select it.
	Agent string `mapstructure:"agent"`
	// Failed, with Tool or TransferTo, keeps only the failed calls (true) or
	// only the others (false); unset, a tool predicate holds at every call
	// and a transfer predicate at the transfers that did not fail (a failed
	// transfer moved no control). See FailedCondition.
	Failed *bool `mapstructure:"failed"`
	// Args and Result narrow Tool by fields of the call's arguments and
	// result; Capture binds names of the capture dict to values of the call
	// (fields.go, call.go). A predicate that captures or compares with a
	// captured value is a capture predicate: its bit says its span-local
	// part holds, and assertions apply the rest to each evaluation's dict.
	Args    Fields    `mapstructure:"args"`
	Result  Fields    `mapstructure:"result"`
	Capture []Capture `mapstructure:"capture"`
	// Set and Reset make a latched predicate: it holds from an event where Set
	// holds until an event where Reset holds (false there unless Set holds
	// too). Both are required together.
	Set   *Predicate `mapstructure:"set"`
	Reset *Predicate `mapstructure:"reset"`
	// Budget, Repeats and NoProgress make a meter predicate (meter.go): it
	// holds where an aggregate of the group first exceeds a bound, where a
	// tool call repeats, where a tool's result stops changing. A meter is
	// optional: never holding is what it is for.
	Budget *Budget `mapstructure:"budget"`
	// Trajectory compares the group's tool calls with a recorded good run
	// (trajectory.go); a meter.
	Trajectory *Trajectory `mapstructure:"trajectory"`
	// Flows holds at a call carrying a value an earlier call produced
	// (flows.go); a meter.
	Flows *Flow `mapstructure:"flows"`
	// Allowlist holds at a call of a tool it does not list (allowlist.go).
	Allowlist *Allowlist `mapstructure:"allowlist"`
	// Evaluation holds where another evaluator's result says so
	// (evaluation.go); its span is an event, as an agent predicate's.
	Evaluation *Evaluation `mapstructure:"evaluation"`
	Repeats    *Repeats    `mapstructure:"repeats"`
	NoProgress *NoProgress `mapstructure:"no_progress"`
	// Optional: never holding is fine (a correct conversation need not say
	// goodbye): no warning says it never held, live or in check.
	Optional bool `mapstructure:"optional"`
}

// Named is one entry of the predicates list; its position is its bit.
type Named struct {
	// Name is how temporal expressions refer to the predicate: an identifier
	// (letters, digits, _; not starting with a digit), not "ok".
	Name      string `mapstructure:"name"`
	Predicate `mapstructure:",squash"`
}

// Config is the predicate part of a processor's configuration; processors
// embed it with `mapstructure:",squash"`.
type Config struct {
	// Predicates, in declaration order: predicate i is bit i of Bits.
	Predicates List `mapstructure:"predicates"`
	// Events selects the sampling events. Default (nil): DefaultEvents, the
	// tool-call and handoff spans of every convention agentguard knows.
	Events *Predicate `mapstructure:"events"`
	// ErrorMode says what an OTTL evaluation error (say, ParseJSON of text
	// that is not JSON) does besides making the predicate false at that span
	// and being counted: ignore (default) logs it, silent does not. propagate
	// is refused: an error must never drop a trace.
	ErrorMode ottl.ErrorMode `mapstructure:"error_mode"`
}

// Validate checks the shape of every predicate; OTTL syntax is checked by
// Compile, which needs the collector's telemetry settings.
func (c Config) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, p := range c.Predicates {
		if err := validName(p.Name); err != nil {
			errs = append(errs, fmt.Errorf("predicates[%d]: %w", i, err))
			continue
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("predicate %q: declared twice", p.Name))
		}
		seen[p.Name] = true
		if err := p.Predicate.validate(); err != nil {
			errs = append(errs, fmt.Errorf("predicate %q: %w", p.Name, err))
		}
	}
	errs = append(errs, c.validateCaptures()...)
	if c.Events != nil {
		if err := c.Events.validate(); err != nil {
			errs = append(errs, fmt.Errorf("events: %w", err))
		} else if len(c.Events.Capture) > 0 || c.Events.compares() {
			errs = append(errs, errors.New("events: cannot capture or compare with captured values: it decides span by span which spans are events"))
		} else if c.Events.latched() {
			errs = append(errs, errors.New("events: cannot be latched: it decides span by span which spans are events"))
		} else if c.Events.meter() {
			errs = append(errs, errors.New("events: cannot be budget, repeats, no_progress, trajectory or flows: a meter is a named predicate; declare it under predicates"))
		} else if c.Events.Optional {
			errs = append(errs, errors.New("events: optional is for a named predicate (one that may never hold)"))
		}
	}
	switch c.ErrorMode {
	case "", ottl.IgnoreError, ottl.SilentError:
	default:
		errs = append(errs, fmt.Errorf("error_mode %q: valid values are %q and %q (a predicate error never drops a trace)",
			c.ErrorMode, ottl.IgnoreError, ottl.SilentError))
	}
	if len(errs) == 0 {
		if n := c.bitsNeeded(); n > MaxBits {
			errs = append(errs, fmt.Errorf("predicates need %d condition bits, at most %d: one per predicate, "+
				"plus one per stateless set or reset condition and per nested latch", n, MaxBits))
		}
	}
	return errors.Join(errs...)
}

// Captures are the bits of the capture predicates: those that bind names or
// compare with bound values (texpr.Assertion.Captures).
func (c Config) Captures() uint64 {
	var mask uint64
	for i, p := range c.Predicates {
		if len(p.Capture) > 0 || p.compares() {
			mask |= 1 << uint(i)
		}
	}
	return mask
}

// validateCaptures checks that every name compared with is bound by some
// predicate, and that latches neither bind nor compare.
func (c Config) validateCaptures() []error {
	var errs []error
	binders := map[string][]string{} // a capture name: the predicates that bind it
	for _, p := range c.Predicates {
		for _, b := range p.Capture {
			binders[b.Name] = append(binders[b.Name], p.Name)
		}
	}
	for _, p := range c.Predicates {
		for _, f := range append(slices.Clone(p.Args), p.Result...) {
			if f.Kind != FieldCaptured && f.Kind != FieldContainsCaptured {
				continue
			}
			switch by := binders[f.Name]; {
			case len(by) == 0:
				errs = append(errs, fmt.Errorf("predicate %q: field %q compares with %q, which no predicate captures", p.Name, f.Path, f.Name))
			case slices.Equal(by, []string{p.Name}):
				// It binds only where its comparisons held, and the
				// comparison needs the binding: it can never hold.
				errs = append(errs, fmt.Errorf("predicate %q: field %q compares with %q, which only this predicate captures; "+
					"it binds only where its comparisons hold, so it can never hold: capture %q in another predicate (the earlier call)",
					p.Name, f.Path, f.Name, f.Name))
			}
		}
		if p.latched() && (p.Set.capturesDeep() || p.Reset.capturesDeep()) {
			errs = append(errs, fmt.Errorf("predicate %q: a latched predicate's set and reset cannot capture or compare with captured values", p.Name))
		}
	}
	return errs
}

func (p *Predicate) compares() bool {
	for _, f := range append(slices.Clone(p.Args), p.Result...) {
		if f.Kind == FieldCaptured || f.Kind == FieldContainsCaptured {
			return true
		}
	}
	return false
}

func (p *Predicate) capturesDeep() bool {
	if p == nil {
		return false
	}
	return len(p.Capture) > 0 || p.compares() || p.Set.capturesDeep() || p.Reset.capturesDeep()
}

func (c Config) bitsNeeded() int {
	n := len(c.Predicates)
	for _, p := range c.Predicates {
		n += p.extraBits()
	}
	return n
}

// extraBits counts the bits a predicate needs besides its own output bit.
func (p *Predicate) extraBits() int {
	if !p.latched() {
		return 0
	}
	return 1 + p.Set.extraBits() + 1 + p.Reset.extraBits()
}

func (p *Predicate) latched() bool { return p.Set != nil || p.Reset != nil }

// validate checks that exactly one form is given, recursively.
func (p *Predicate) validate() error {
	var forms []string
	if p.Condition != "" {
		forms = append(forms, "condition")
	}
	if p.Tool != "" {
		forms = append(forms, "tool")
	}
	if p.TransferTo != "" {
		forms = append(forms, "transfer_to")
	}
	if p.Agent != "" {
		forms = append(forms, "agent")
	}
	if p.latched() {
		forms = append(forms, "set/reset")
	}
	for _, m := range []struct {
		key   string
		given bool
	}{{"budget", p.Budget != nil}, {"repeats", p.Repeats != nil}, {"no_progress", p.NoProgress != nil}, {"evaluation", p.Evaluation != nil}, {"allowlist", p.Allowlist != nil}, {"trajectory", p.Trajectory != nil}, {"flows", p.Flows != nil}} {
		if m.given {
			forms = append(forms, m.key)
		}
	}
	switch {
	case len(forms) == 0:
		return errors.New("empty: give an OTTL condition or one of tool, transfer_to, agent, set/reset, budget, repeats, no_progress, evaluation, allowlist, trajectory, flows")
	case len(forms) > 1 && forms[0] == "condition":
		return fmt.Errorf("give either an OTTL condition or a shorthand, not both (got %v)", forms)
	case len(forms) > 1:
		return fmt.Errorf("give exactly one shorthand, got %v", forms)
	case p.Failed != nil && p.Tool == "" && p.TransferTo == "":
		return fmt.Errorf("failed: only narrows tool or transfer_to (got %s)", forms[0])
	case (len(p.Args) > 0 || len(p.Result) > 0 || len(p.Capture) > 0) && p.Tool == "":
		return fmt.Errorf("args, result and capture only narrow tool (got %s)", forms[0])
	case p.latched() && (p.Set == nil || p.Reset == nil):
		return errors.New("a latched predicate needs both set and reset")
	case p.latched() && (p.Set.meter() || p.Reset.meter()):
		return errors.New("set and reset cannot be budget, repeats, no_progress, trajectory or flows: a meter is a predicate of its own; latch on a condition")
	case p.Budget != nil:
		return p.Budget.validate()
	case p.Repeats != nil:
		return p.Repeats.validate()
	case p.NoProgress != nil:
		return p.NoProgress.validate()
	case p.Evaluation != nil:
		return p.Evaluation.validate()
	case p.Allowlist != nil:
		return p.Allowlist.validate()
	case p.Trajectory != nil:
		return p.Trajectory.validate()
	case p.Flows != nil:
		return p.Flows.validate()
	case p.latched():
		if err := p.Set.validate(); err != nil {
			return fmt.Errorf("set: %w", err)
		}
		if err := p.Reset.validate(); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	return nil
}

func validName(name string) error {
	if name == "" {
		return errors.New("name is required")
	}
	if name == "ok" {
		return errors.New(`name "ok" is reserved: temporal expressions use it for "always true"`)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return fmt.Errorf("name %q: must be an identifier (letters, digits and _, not starting with a digit) "+
				"so that temporal expressions can refer to it", name)
		}
	}
	return nil
}

// Literals are the names the shorthand predicates match, by predicate: a
// tool name (tool) or an agent name (transfer_to, agent). A misspelt one
// never holds; these are what a "did you mean" compares with the names the
// spans carry. Predicates without a shorthand (a condition, a latch) have
// none.
func (c Config) Literals() map[string]Literal {
	out := map[string]Literal{}
	for _, p := range c.Predicates {
		switch {
		case p.Tool != "":
			out[p.Name] = Literal{Tool: true, Name: p.Tool, Captures: captureSources(p.Capture)}
		case p.TransferTo != "":
			out[p.Name] = Literal{Name: p.TransferTo}
		case p.Agent != "":
			out[p.Name] = Literal{Name: p.Agent}
		case p.Budget != nil:
			out[p.Name] = Literal{Quantity: p.Budget.quantity()}
		}
	}
	return out
}

// OptionalNames are the predicates marked optional, and the meters: never
// holding is fine.
func (c Config) OptionalNames() map[string]bool {
	out := map[string]bool{}
	for _, p := range c.Predicates {
		if p.Optional || p.meter() {
			out[p.Name] = true
		}
	}
	return out
}

// Literal is the name a shorthand predicate matches: a tool's, or an
// agent's; or the quantity a budget reads.
type Literal struct {
	Tool bool
	Name string
	// Captures are a tool predicate's capture paths (args.PATH, result.PATH):
	// one no call of the tool holds never binds (CaptureWatch).
	Captures []string
	// Quantity is a budget's (and Name is empty): one no span carries
	// never adds up (QuantityWatch).
	Quantity string
}

func captureSources(cs []Capture) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.From)
	}
	return out
}

// The attributes that name a call's tool, and an agent, in the conventions
// the shorthands read.
var (
	toolNameKeys  = []string{"gen_ai.tool.name", "tool.name", "traceloop.entity.name"}
	agentNameKeys = []string{"gen_ai.agent.name", "agent.name", "graph.node.id", "gen_ai.handoff.to_agent"}
)

// NamesOn calls tool and agent with each tool and agent name a span's
// attributes carry: what a misspelt literal is compared with.
func NamesOn(a pcommon.Map, tool, agent func(string)) {
	for _, k := range toolNameKeys {
		if v, ok := a.Get(k); ok && v.Str() != "" {
			tool(v.Str())
		}
	}
	for _, k := range agentNameKeys {
		if v, ok := a.Get(k); ok && v.Str() != "" {
			agent(v.Str())
		}
	}
}

// Form is a short text of a predicate written in one of the forms that are
// neither an OTTL condition nor a tool or transfer shorthand nor a latch:
// agent, allowlist, a meter, evaluation; "" for the others. check uses it to
// say what a predicate was.
func (p *Predicate) Form() string {
	switch {
	case p.Agent != "":
		return "agent: " + p.Agent
	case p.Allowlist != nil:
		return "allowlist: [" + strings.Join(p.Allowlist.Tools, ", ") + "]"
	case p.meter():
		return p.describeMeter()
	case p.Evaluation != nil:
		return p.Evaluation.String()
	}
	return ""
}
