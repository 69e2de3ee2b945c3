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

// An atom is a candidate predicate of an abstraction: one fact about the
// state a tool call's result carries (a boolean field true, a field equal
// to one of its few values, a number at or above a threshold), written as a
// native result: predicate so that the configuration abstract writes runs
// without OTTL.
type atom struct {
	name  string
	field string
	match map[string]any // the field matcher, as YAML writes it
	holds []bool         // per event, in the order resultFields read them
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

// atoms proposes the candidates, each holding somewhere and not
// everywhere, in path order.
func (fv *resultFields) atoms() []atom {
	var out []atom
	for _, path := range slices.Sorted(maps.Keys(fv.paths)) {
		out = append(out, fv.atomsOf(path)...)
	}
	return slices.DeleteFunc(out, func(a atom) bool {
		n := 0
		for _, h := range a.holds {
			if h {
				n++
			}
		}
		return n == 0 || n == len(a.holds)
	})
}

func (fv *resultFields) atomsOf(path string) []atom {
	var bools, nums int
	strs := map[string]bool{}
	var numbers []float64
	for i := range fv.events {
		v := fv.value(path, i)
		switch v.Type() {
		case pcommon.ValueTypeBool:
			bools++
		case pcommon.ValueTypeStr:
			strs[v.Str()] = true
		case pcommon.ValueTypeInt:
			nums++
			numbers = append(numbers, float64(v.Int()))
		case pcommon.ValueTypeDouble:
			nums++
			numbers = append(numbers, v.Double())
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
	a := atom{name: name, field: path, match: match, holds: make([]bool, fv.events)}
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
	if _, ok := fv.paths[a.field]; !ok {
		return a, fmt.Errorf("--hazard %q: no tool result read carries the field %q (fields: %s)", spec, a.field,
			strings.Join(slices.Sorted(maps.Keys(fv.paths)), ", "))
	}
	if !slices.Contains(a.holds, true) {
		return a, fmt.Errorf("--hazard %q: it holds at no event of the episodes read: with no unsafe episode there is nothing to learn", spec)
	}
	return a, nil
}
