// SPDX-License-Identifier: Apache-2.0

// Package pattern is the library of named assertion patterns (requires,
// before, never, never_after, response, max_calls, max_consecutive, first,
// handoff_returns): an assertion written as a pattern with parameters instead
// of an expression. A pattern is defined by what it expands to, a temporal
// expression with its kind (always, never, or initially: one evaluation from
// the group's first event) and end policy, so that everything downstream of
// the assertion config (the monitors, check, the explanations) runs the
// expansion unchanged. Meaning is the same pattern written directly from its
// plain words, which the tests hold the expansion to.
package pattern

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/internal/spelling"
)

// Horizon is the longest wait an expansion can express ("until the first x")
// in events: the largest repeat count of the expression language. A pattern
// that waits for an event further away than this misreads the group, so a
// processor using patterns must end its groups sooner (max_events_per_group).
const Horizon = texpr.MaxRepeat

// Kinds of an expansion.
const (
	Always    = "always"    // evaluation at every event; a failure violates
	Never     = "never"     // evaluation at every event; a match violates
	Initially = "initially" // one evaluation from the group's first event; a failure violates
)

// Expansion is what a pattern means in the assertion config.
type Expansion struct {
	Kind  string // Always, Never or Initially
	Expr  string // the temporal expression, in the text syntax
	OnEnd string // the end policy: "inconclusive", "fail" or "ignore"
}

func (e Expansion) String() string {
	return fmt.Sprintf("%s: %s (on_end: %s)", e.Kind, e.Expr, e.OnEnd)
}

// Pattern is a pattern with its parameters, checked and expanded.
type Pattern struct {
	Name string
	// Args are the parameters in the pattern's own order.
	Args []Arg
	Expansion
	def *def
}

// Arg is one parameter: a set of predicates (any of them) or a count.
type Arg struct {
	Name   string
	Events []string // an event parameter: the predicates, any of which makes the event
	Count  int      // a count parameter (k, n)
}

func (a Arg) String() string {
	if a.Events == nil {
		return strconv.Itoa(a.Count)
	}
	if len(a.Events) == 1 {
		return a.Events[0]
	}
	return "[" + strings.Join(a.Events, ", ") + "]"
}

// String is the pattern as a user reads it: response(x: a, y: [b, c], k: 2).
func (p Pattern) String() string {
	parts := make([]string, len(p.Args))
	for i, a := range p.Args {
		parts[i] = a.Name + ": " + a.String()
	}
	return p.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Meaning is the pattern in plain words, with its parameters.
func (p Pattern) Meaning() string {
	r := make([]string, 0, 2*len(p.Args))
	for _, a := range p.Args {
		text := a.String()
		if len(a.Events) > 1 {
			text = "one of " + strings.Join(a.Events, ", ")
		}
		r = append(r, "{"+a.Name+"}", text)
	}
	text := strings.NewReplacer(r...).Replace(p.def.meaning)
	return strings.NewReplacer(" 1 events", " 1 event", "at most 1 times", "at most once").Replace(text)
}

// arg is the parameter called name (the definitions ask for each one).
func (p Pattern) arg(name string) Arg {
	for _, a := range p.Args {
		if a.Name == name {
			return a
		}
	}
	panic("pattern " + p.Name + " has no parameter " + name)
}

type paramKind int

const (
	eventParam paramKind = iota // a predicate name, or a list of them
	countParam                  // a positive integer
)

type param struct {
	name string
	kind paramKind
}

// def is one pattern of the library: its parameters, its plain words, and
// its expansion.
type def struct {
	name    string
	params  []param
	meaning string
	expand  func(p Pattern) Expansion
}

var (
	x     = param{"x", eventParam}
	y     = param{"y", eventParam}
	k     = param{"k", countParam}
	n     = param{"n", countParam}
	to    = param{"to", eventParam}
	tools = param{"tools", eventParam}
	back  = param{"back", eventParam}
)

// library lists the patterns in the order the docs give them. Horizon
// appears where the plain words say "until": see its comment.
var library = []def{
	{"requires", []param{x}, "{x} happens at least once in the group",
		func(p Pattern) Expansion {
			x := p.ev("x")
			return Expansion{Initially, x + " | " + not(p, "x") + " * " + span(1, Horizon) + " + " + x, "fail"}
		}},
	{"before", []param{x, y}, "no {y} happens before the first {x} (an event that is both counts as {x})",
		func(p Pattern) Expansion {
			x := p.ev("x")
			neither := "~(" + strings.Join(append(slices.Clone(p.arg("x").Events), p.arg("y").Events...), " | ") + ")"
			return Expansion{Initially, x + " | " + neither + " * " + span(1, Horizon) + " + " + x, "ignore"}
		}},
	{"never", []param{x}, "{x} never happens",
		func(p Pattern) Expansion { return Expansion{Never, p.ev("x"), "ignore"} }},
	{"never_after", []param{x, y}, "once {x} happened, {y} never happens at a later event",
		func(p Pattern) Expansion {
			x, y := p.ev("x"), p.ev("y")
			return Expansion{Never, x + " + (" + y + " | " + not(p, "x") + " * " + span(1, Horizon) + " + " + y + ")", "ignore"}
		}},
	{"response", []param{x, y, k}, "every {x} is followed by {y} within {k} events (pending when the group ends sooner)",
		func(p Pattern) Expansion {
			return Expansion{Always, p.ev("x") + " >> " + within(p, "y", "~"+paren(p.ev("y")), p.arg("k").Count), "inconclusive"}
		}},
	{"max_calls", []param{x, n}, "{x} happens at most {n} times in the group",
		func(p Pattern) Expansion {
			x := p.ev("x")
			next := "(" + x + " | " + not(p, "x") + " * " + span(1, Horizon) + " + " + x + ")"
			return Expansion{Never, x + " + " + next + " * " + strconv.Itoa(p.arg("n").Count), "ignore"}
		}},
	{"max_consecutive", []param{x, n}, "{x} happens at most {n} times in a row",
		func(p Pattern) Expansion {
			return Expansion{Never, paren(p.ev("x")) + " * " + strconv.Itoa(p.arg("n").Count+1), "ignore"}
		}},
	{"first", []param{x}, "the group's first event is {x}",
		func(p Pattern) Expansion { return Expansion{Initially, p.ev("x"), "inconclusive"} }},
	{"handoff_returns", []param{to, tools, back, k}, "after every {to}, control comes back with {back} within {k} events, and every event before it is {tools} (pending when the group ends sooner)",
		func(p Pattern) Expansion {
			return Expansion{Always, p.ev("to") + " >> " + within(p, "back", paren(p.ev("tools")), p.arg("k").Count), "inconclusive"}
		}},
}

// ev is an event parameter as an operand: a name, or (a | b).
func (p Pattern) ev(name string) string {
	evs := p.arg(name).Events
	if len(evs) == 1 {
		return evs[0]
	}
	return "(" + strings.Join(evs, " | ") + ")"
}

// not is "not the event": ~a or ~(a | b).
func not(p Pattern, name string) string { return "~" + p.ev(name) }

func paren(s string) string {
	if strings.HasPrefix(s, "(") || !strings.ContainsAny(s, " ") {
		return s
	}
	return "(" + s + ")"
}

func span(lo, hi int) string { return "(" + strconv.Itoa(lo) + "," + strconv.Itoa(hi) + ")" }

// within is "the event named goal at one of the next k cycles, only events
// between matching gap": goal, or gap repeated 1..k-1 times then goal. A
// repeat from 0 would not do: its empty match ends at the cycle it starts,
// so the goal would be checked one cycle late (spec §2).
func within(p Pattern, goal, gap string, k int) string {
	g := p.ev(goal)
	if k == 1 {
		return g
	}
	rep := strconv.Itoa(k - 1)
	if k > 2 {
		rep = span(1, k-1)
	}
	return "(" + g + " | " + gap + " * " + rep + " + " + g + ")"
}

// Names are the patterns of the library, in order.
func Names() []string {
	out := make([]string, len(library))
	for i, d := range library {
		out[i] = d.name
	}
	return out
}

func lookup(name string) *def {
	for i := range library {
		if library[i].name == name {
			return &library[i]
		}
	}
	return nil
}

// New checks a pattern's parameters, as the config gives them (a map of
// parameter name to a predicate name, a list of them, or an integer),
// against the declared predicates, and expands it.
func New(name string, raw any, predicates []string) (Pattern, error) {
	d := lookup(name)
	if d == nil {
		return Pattern{}, fmt.Errorf("unknown pattern %q: the patterns are %s", name, strings.Join(Names(), ", "))
	}
	params, ok := raw.(map[string]any)
	if !ok {
		return Pattern{}, fmt.Errorf("%s: want its parameters as a map {%s}, got %s", name, d.paramList(), describe(raw))
	}
	var errs []error
	for key := range params {
		if !slices.ContainsFunc(d.params, func(p param) bool { return p.name == key }) {
			errs = append(errs, fmt.Errorf("%s: unknown parameter %q (%s takes %s)", name, key, name, d.paramList()))
		}
	}
	p := Pattern{Name: name, def: d}
	for _, prm := range d.params {
		v, ok := params[prm.name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: parameter %s is missing (%s takes %s)", name, prm.name, name, d.paramList()))
			continue
		}
		a, err := prm.read(v, predicates)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", name, prm.name, err))
			continue
		}
		p.Args = append(p.Args, a)
	}
	if errs != nil {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return Pattern{}, errors.Join(errs...)
	}
	p.Expansion = d.expand(p)
	return p, nil
}

func (d *def) paramList() string {
	names := make([]string, len(d.params))
	for i, p := range d.params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

func (prm param) read(v any, predicates []string) (Arg, error) {
	a := Arg{Name: prm.name}
	if prm.kind == countParam {
		n, ok := positive(v)
		if !ok {
			return a, fmt.Errorf("want a positive integer of at most %d, got %s", MaxCount, describe(v))
		}
		a.Count = n
		return a, nil
	}
	var names []string
	switch v := v.(type) {
	case string:
		names = []string{v}
	case []any:
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return a, fmt.Errorf("want predicate names, got %s in the list", describe(item))
			}
			names = append(names, s)
		}
		if len(names) == 0 {
			return a, errors.New("an empty list: give at least one predicate")
		}
	case []string:
		names = v
	default:
		return a, fmt.Errorf("want a predicate name or a list of them, got %s", describe(v))
	}
	for _, s := range names {
		if !slices.Contains(predicates, s) {
			return a, fmt.Errorf("predicate %q is not declared (declared: %s)%s", s, strings.Join(predicates, ", "), spelling.DidYouMean(s, predicates))
		}
	}
	if len(names) == 0 {
		return a, errors.New("an empty list: give at least one predicate")
	}
	a.Events = slices.Compact(slices.Clone(names))
	return a, nil
}

// MaxCount bounds k and n: max_consecutive repeats its event n+1 times.
const MaxCount = Horizon - 1

// positive reads an integer 1..MaxCount as YAML, JSON or Go code give it.
func positive(v any) (int, bool) {
	var f float64
	switch v := v.(type) {
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case uint64:
		f = float64(v)
	case float64:
		f = v
	default:
		return 0, false
	}
	if f != math.Trunc(f) || f < 1 || f > MaxCount {
		return 0, false
	}
	return int(f), true
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(v)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}
