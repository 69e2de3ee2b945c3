// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"slices"
	"strings"
)

// The capture dict (spec §6). A predicate can bind values from its event to
// names and compare with values bound earlier; the dict flows along the
// evaluation: a's dict goes to b in a + b, a / b and a >> b; a | b passes
// each side's; a & b and a ^ b merge the two sides' (the right side's value
// wins a name both bound); every iteration of a * (n,m) starts from the
// repeat's input dict, and a repeat's match passes its last iteration's (its
// input, for the empty match); ~a, the vacuous match of >>, and a
// termination record carry the input dict.
//
// Which predicates read or write the dict is the caller's business: an
// Assertion names them (Captures), and each event carries what they do there
// (Event.Captures). The engine evaluates an expression that uses none of them
// exactly as before, on the allocation-free evaluator; one that does runs on
// the tree evaluator, whose every match carries its dict (see monitor.go).

// Dict is a capture dict: names bound to values, sorted by name. It is
// immutable, so that the threads of an evaluation share it; the zero Dict is
// empty.
type Dict struct{ b []Binding }

// Binding is one name of a Dict and its value.
type Binding struct {
	Name  string
	Value Value
}

// Value is a captured value as canonical JSON text: a string quoted, a number
// in its shortest form, an object with its keys sorted. Two values are equal
// exactly when their texts are.
type Value string

// Get returns the value bound to name.
func (d Dict) Get(name string) (Value, bool) {
	i, ok := slices.BinarySearchFunc(d.b, name, cmpBinding)
	if !ok {
		return "", false
	}
	return d.b[i].Value, true
}

func cmpBinding(b Binding, name string) int { return strings.Compare(b.Name, name) }

// Len is the number of names bound.
func (d Dict) Len() int { return len(d.b) }

// Bindings are the names and values in name order; the caller must not
// change them.
func (d Dict) Bindings() []Binding { return d.b }

// With returns d with name bound to v (rebinding a name replaces its value).
func (d Dict) With(name string, v Value) Dict {
	i, ok := slices.BinarySearchFunc(d.b, name, cmpBinding)
	if ok && d.b[i].Value == v {
		return d
	}
	out := make([]Binding, len(d.b), len(d.b)+1)
	copy(out, d.b)
	if ok {
		out[i].Value = v
		return Dict{out}
	}
	return Dict{slices.Insert(out, i, Binding{name, v})}
}

// Merge returns d with every binding of o added, o's value winning a name
// both bind: the dict of a & b and a ^ b, o being b's.
func (d Dict) Merge(o Dict) Dict {
	switch {
	case len(o.b) == 0:
		return d
	case len(d.b) == 0:
		return o
	}
	out := d
	for _, b := range o.b {
		out = out.With(b.Name, b.Value)
	}
	return out
}

// Equal reports whether two dicts bind the same names to the same values.
func (d Dict) Equal(o Dict) bool { return slices.Equal(d.b, o.b) }

// Compare orders dicts binding by binding (name, then value, as text; a
// dict that is a prefix of another first). Where an operator keeps one of
// several matches ending at one cycle (&, first, once), it keeps the one
// whose dict is least, so that which one does not depend on the order the
// evaluator produced them in; without captures every dict is empty, and the
// first produced is kept.
func (d Dict) Compare(o Dict) int {
	return slices.CompareFunc(d.b, o.b, func(x, y Binding) int {
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return strings.Compare(string(x.Value), string(y.Value))
	})
}

// String prints the dict as trace trees show it: {city: "New York", n: 2}.
func (d Dict) String() string {
	var s strings.Builder
	s.WriteByte('{')
	for i, b := range d.b {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(b.Name + ": " + string(b.Value))
	}
	s.WriteByte('}')
	return s.String()
}

// Captures are what the capture predicates do at one event: the caller
// builds them from the event's span (the values a predicate binds or
// compares are read there once) and the engine applies them to each thread's
// dict.
type Captures interface {
	// Apply tells whether capture predicate i, whose bit is set at this
	// event, holds under the dict d, and the dict after it: d with the
	// predicate's bindings.
	Apply(i int, d Dict) (holds bool, out Dict)
}
