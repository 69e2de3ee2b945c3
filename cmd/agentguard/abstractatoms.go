// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// An atom is a candidate predicate of an abstraction, written as a native
// predicate so that the configuration abstract writes runs without OTTL:
// one fact about the state a tool call's result carries (a boolean field
// true, a field equal to one of its few values, a number at or above a
// threshold), two such facts of one result together, a call of a tool, or
// a tool called and not yet undone by another (a latch).
type atom struct {
	name string
	// result: per field its matcher, as YAML writes it, for an atom over a
	// tool's result (one field, or two for a conjunction); nil otherwise.
	result map[string]any
	// call: the predicate as YAML writes it, for an atom over the calls
	// themselves (tool, set and reset); nil for a result atom.
	call  map[string]any
	holds []bool // per event, in the order resultFields read them
}

// predicate is the atom as a probguard predicate, its name aside.
func (a atom) predicate() map[string]any {
	if a.call != nil {
		return a.call
	}
	return map[string]any{"tool": "*", "result": a.result}
}

// threshold is the field and the threshold of an atom "field ≥ t"; false
// for every other atom.
func (a atom) threshold() (field string, t float64, ok bool) {
	if len(a.result) != 1 {
		return "", 0, false
	}
	for f, m := range a.result {
		match, _ := m.(map[string]any)
		t, ok = match["ge"].(float64)
		return f, t, ok
	}
	return "", 0, false
}

// reads reports whether a result atom reads field.
func (a atom) reads(field string) bool {
	_, ok := a.result[field]
	return ok
}

// maxEnumValues bounds the values of a string field taken as an enum;
// maxThresholds the thresholds tried on a numeric field.
const (
	maxEnumValues = 8
	maxThresholds = 8
	maxFieldDepth = 2
)

// resultFields are the scalar fields of each event's result, flattened to
// dotted paths (two levels deep): per path, one value per event, absent
// where the result has none.
type resultFields struct {
	events int
	paths  map[string][]pcommon.Value // per path, per event (empty Value: absent)
}

func newResultFields() *resultFields { return &resultFields{paths: map[string][]pcommon.Value{}} }

// add reads one event's result.
func (fv *resultFields) add(result pcommon.Value, ok bool) {
	i := fv.events
	fv.events++
	if ok && result.Type() == pcommon.ValueTypeMap {
		fv.walk("", result.Map(), i, 0)
	}
}

func (fv *resultFields) walk(prefix string, m pcommon.Map, i, depth int) {
	for k, v := range m.All() {
		path := prefix + k
		if v.Type() == pcommon.ValueTypeMap && depth+1 < maxFieldDepth {
			fv.walk(path+".", v.Map(), i, depth+1)
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeBool, pcommon.ValueTypeStr, pcommon.ValueTypeInt, pcommon.ValueTypeDouble:
		default:
			continue
		}
		vs := fv.paths[path]
		for len(vs) < i {
			vs = append(vs, pcommon.NewValueEmpty())
		}
		fv.paths[path] = append(vs[:i], v)
	}
}

// value is path's value at event i (an empty Value: absent).
func (fv *resultFields) value(path string, i int) pcommon.Value {
	vs := fv.paths[path]
	if i < len(vs) {
		return vs[i]
	}
	return pcommon.NewValueEmpty()
}

// atoms proposes the candidates, in path order, each telling some events
// before the hazard from others. Its values and thresholds are those
// events': what a result says only at the hazard or after it predicts
// nothing (the minutes away that made the house unsafe).
func (fv *resultFields) atoms(before []bool) []atom {
	var out []atom
	for _, path := range slices.Sorted(maps.Keys(fv.paths)) {
		out = append(out, fv.atomsOf(path, before)...)
	}
	return slices.DeleteFunc(out, func(a atom) bool { return a.constant(before) })
}

// constant reports whether an atom holds at none of the events before the
// hazard or at every one: it tells none of the states predicted from
// another.
func (a atom) constant(before []bool) bool {
	var n, all int
	for i, h := range a.holds {
		if before[i] {
			all++
			if h {
				n++
			}
		}
	}
	return n == 0 || n == all
}

// conjunctions are the pairs of result atoms over different fields, each
// one native predicate (a result: of two fields holds where both match): a
// threshold that matters only once a boolean holds (minutes away with the
// stove on, once the errand is done) is then one atom, where the chain of
// its two parts spends two predicates and splits every state they touch. A
// pair is kept where it says something neither part says: it holds
// somewhere and differs from both.
func conjunctions(atoms []atom, before []bool) []atom {
	var out []atom
	for i, x := range atoms {
		for _, y := range atoms[i+1:] {
			if sharesField(x, y) || !(x.categorical() || y.categorical()) {
				continue
			}
			c := conjunction(x, y)
			if k := holdsKey(c.holds, before); !c.constant(before) && k != holdsKey(x.holds, before) && k != holdsKey(y.holds, before) {
				out = append(out, c)
			}
		}
	}
	return out
}

// categorical reports whether a result atom is a field equal to a value
// (a boolean true, an enum's value), not a threshold: a conjunction is
// kept only with one, a threshold that matters where a fact holds (two
// thresholds together are a corner of two numbers, which a chain of the
// two would find, and they multiply the candidates).
func (a atom) categorical() bool {
	for _, m := range a.result {
		if _, ok := m.(map[string]any)["equals"]; !ok {
			return false
		}
	}
	return true
}

func sharesField(x, y atom) bool {
	for f := range x.result {
		if y.reads(f) {
			return true
		}
	}
	return false
}

func conjunction(x, y atom) atom {
	c := atom{name: x.name + "_and_" + y.name, result: maps.Clone(x.result), holds: make([]bool, len(x.holds))}
	maps.Copy(c.result, y.result)
	for i := range c.holds {
		c.holds[i] = x.holds[i] && y.holds[i]
	}
	return c
}

// distinct keeps the first of the atoms that hold at the same events
// before the hazard: the chain cannot tell them apart, and the first is the
// simplest (the candidates come simplest first).
func distinct(atoms []atom, before []bool) []atom {
	seen := map[string]bool{}
	return slices.DeleteFunc(atoms, func(a atom) bool {
		k := holdsKey(a.holds, before)
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	})
}

// holdsKey packs holds at the events before the hazard into a string, a
// bit an event.
func holdsKey(holds, before []bool) string {
	b := make([]byte, (len(holds)+7)/8)
	for i, h := range holds {
		if h && before[i] {
			b[i/8] |= 1 << uint(i%8)
		}
	}
	return string(b)
}

// atomsOf are the atoms of one field, by the type of its values: its
// values and thresholds are those of the events before the hazard.
func (fv *resultFields) atomsOf(path string, before []bool) []atom {
	var bools, nums int
	strs := map[string]bool{}
	var numbers []float64
	for i := range fv.events {
		v := fv.value(path, i)
		switch v.Type() {
		case pcommon.ValueTypeBool:
			bools++
		case pcommon.ValueTypeStr:
			if before[i] {
				strs[v.Str()] = true
			}
		case pcommon.ValueTypeInt, pcommon.ValueTypeDouble:
			nums++
			if x, _ := numberOf(v); before[i] {
				numbers = append(numbers, x)
			}
		}
	}
	switch {
	case bools > 0 && len(strs) == 0 && nums == 0:
		return []atom{fv.atom(path, name(path), map[string]any{"equals": true}, func(v pcommon.Value) bool {
			return v.Type() == pcommon.ValueTypeBool && v.Bool()
		})}
	case len(strs) > 0 && len(strs) <= maxEnumValues && bools == 0 && nums == 0:
		var out []atom
		for _, s := range slices.Sorted(maps.Keys(strs)) {
			out = append(out, fv.atom(path, name(path+"_is_"+s), map[string]any{"equals": s}, func(v pcommon.Value) bool {
				return v.Type() == pcommon.ValueTypeStr && v.Str() == s
			}))
		}
		return out
	case nums > 0 && bools == 0 && len(strs) == 0:
		var out []atom
		for _, t := range thresholds(numbers) {
			out = append(out, fv.atom(path, name(path+"_ge_"+strconv.FormatFloat(t, 'g', -1, 64)), map[string]any{"ge": t}, func(v pcommon.Value) bool {
				x, ok := numberOf(v)
				return ok && x >= t
			}))
		}
		return out
	}
	return nil
}

func (fv *resultFields) atom(path, name string, match map[string]any, holds func(pcommon.Value) bool) atom {
	a := atom{name: name, result: map[string]any{path: match}, holds: make([]bool, fv.events)}
	for i := range fv.events {
		a.holds[i] = holds(fv.value(path, i))
	}
	return a
}

func numberOf(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	}
	return 0, false
}

// thresholds are up to maxThresholds of the distinct values, evenly
// spaced among them, the smallest left out (≥ it always holds). Spaced
// among the distinct values rather than at the observations' quantiles: a
// field that is 0 at most events (minutes away with the stove on) still
// gets thresholds across the values it takes when it matters.
func thresholds(numbers []float64) []float64 {
	distinct := slices.Compact(slices.Sorted(slices.Values(numbers)))
	if len(distinct) <= 1 {
		return nil
	}
	if len(distinct)-1 <= maxThresholds {
		return distinct[1:]
	}
	var out []float64
	for k := 1; k <= maxThresholds; k++ {
		t := distinct[k*(len(distinct)-1)/maxThresholds]
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

var notIdentifier = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// name makes an identifier of a path and a value: letters, digits, _.
func name(s string) string {
	n := strings.Trim(notIdentifier.ReplaceAllString(s, "_"), "_")
	if n == "" || (n[0] >= '0' && n[0] <= '9') {
		n = "f_" + n
	}
	return n
}

// parseHazard reads --hazard: FIELD (a boolean field true), FIELD=VALUE,
// or FIELD>=NUMBER; it is an atom too.
func (fv *resultFields) parseHazard(spec string) (atom, error) {
	if field, v, ok := strings.Cut(spec, ">="); ok {
		t, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return atom{}, fmt.Errorf("--hazard %q: %q is not a number", spec, v)
		}
		field = strings.TrimSpace(field)
		return fv.checked(spec, fv.atom(field, name(field+"_ge_"+v), map[string]any{"ge": t}, func(v pcommon.Value) bool {
			x, ok := numberOf(v)
			return ok && x >= t
		}))
	}
	if field, v, ok := strings.Cut(spec, "="); ok {
		field, v = strings.TrimSpace(field), strings.TrimSpace(v)
		return fv.checked(spec, fv.atom(field, name(field+"_is_"+v), map[string]any{"equals": v}, func(x pcommon.Value) bool {
			return x.AsString() == v
		}))
	}
	field := strings.TrimSpace(spec)
	return fv.checked(spec, fv.atom(field, name(field), map[string]any{"equals": true}, func(v pcommon.Value) bool {
		return v.Type() == pcommon.ValueTypeBool && v.Bool()
	}))
}

// checked refuses a hazard on a field no result carries, or one that never
// holds.
func (fv *resultFields) checked(spec string, a atom) (atom, error) {
	field := slices.Collect(maps.Keys(a.result))[0]
	if _, ok := fv.paths[field]; !ok {
		return a, fmt.Errorf("--hazard %q: no tool result read carries the field %q (fields: %s)", spec, field,
			strings.Join(slices.Sorted(maps.Keys(fv.paths)), ", "))
	}
	if !slices.Contains(a.holds, true) {
		return a, fmt.Errorf("--hazard %q: it holds at no event of the episodes read: with no unsafe episode there is nothing to learn", spec)
	}
	return a, nil
}
