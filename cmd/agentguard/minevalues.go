// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/core/texpr"
)

// Argument and result values. The first reading of the good runs carries
// two probe predicates, a call of any tool capturing its whole arguments
// and its whole result: read as every args: and result: predicate reads
// them (each convention's attribute, LangChain's wrappers taken off), as
// canonical JSON. Every scalar field of them (a path of keys; $ for a bare
// value) becomes, per tool, a set of values with their counts. A field
// present at every call of its tool, with a few values each seen more than
// once, gives a value predicate: that tool, with args or result matching
// exactly those values; the miner proposes that every call has one.

const (
	probeArgs   = "agentguard_mine_args"
	probeResult = "agentguard_mine_result"
	// maxValues: a field with more values is not a small set
	maxValues = 8
	// maxValueLen: a longer string is free text, not a value to list
	maxValueLen = 40
	// maxUnseen: a field whose values each were seen once or so (an ID, a
	// time) is not proposed: Good-Turing's (Once+1)/(Calls+1) above this
	maxUnseen = 0.5
	// maxValuePredicates bounds the predicate bits value predicates take,
	// maxPerTool those of one tool
	maxValuePredicates = 16
	maxPerTool         = 3
)

// withProbes is the configuration with the two probes after its own
// predicates, and whether they fit.
func withProbes(c predicate.Config) (predicate.Config, bool) {
	out := c
	out.Predicates = slices.Clone(c.Predicates)
	for _, p := range []struct{ name, from string }{{probeArgs, "args"}, {probeResult, "result"}} {
		out.Predicates = append(out.Predicates, predicate.Named{Name: p.name, Predicate: predicate.Predicate{
			Tool: "*", Capture: []predicate.Capture{{Name: "v", From: p.from}},
		}})
	}
	if len(out.Predicates) > texpr.MaxPredicates || out.Validate() != nil {
		return c, false
	}
	return out, true
}

// fieldValues are one field of one tool's calls: how many calls held it,
// and its values (canonical JSON) with their counts.
type fieldValues struct {
	tool, field string // field: args.city, result.status, args.$
	calls       int
	values      map[string]int
}

// callValues reads the probes' captures at the tool calls of the groups:
// every field of every tool, and each tool's calls.
func callValues(groups []events.Group, argsBit, resultBit int) (fields []*fieldValues, calls map[string]int) {
	calls = map[string]int{}
	byKey := map[string]*fieldValues{}
	for _, g := range groups {
		for _, ev := range g.Events {
			tool, ok := strings.CutPrefix(predicate.Describe(ev.Span), "tool ")
			if !ok || strings.HasSuffix(tool, " (failed)") {
				continue
			}
			calls[tool]++
			for _, side := range []struct {
				bit  int
				head string
			}{{argsBit, "args"}, {resultBit, "result"}} {
				v, ok := captured(ev, side.bit)
				if !ok {
					continue
				}
				for path, val := range leaves(v) {
					key := tool + "\x00" + side.head + "." + path
					f := byKey[key]
					if f == nil {
						f = &fieldValues{tool: tool, field: side.head + "." + path, values: map[string]int{}}
						byKey[key] = f
						fields = append(fields, f)
					}
					f.calls++
					f.values[val]++
				}
			}
		}
	}
	return fields, calls
}

// captured is the JSON a probe bound at the event.
func captured(ev sequence.Event, bit int) (string, bool) {
	if ev.Captures == nil || ev.Bits>>uint(bit)&1 == 0 {
		return "", false
	}
	ok, d := ev.Captures.Apply(bit, texpr.Dict{})
	if !ok {
		return "", false
	}
	v, ok := d.Get("v")
	return string(v), ok
}

// leaves are the scalar fields of a JSON value by path ($ for a bare
// scalar), each as canonical JSON; arrays are not entered.
func leaves(text string) map[string]string {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	out := map[string]string{}
	var walk func(prefix string, v any, depth int)
	walk = func(prefix string, v any, depth int) {
		switch x := v.(type) {
		case map[string]any:
			if depth >= 3 {
				return
			}
			for k, e := range x {
				if !validFieldKey(k) {
					continue
				}
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, e, depth+1)
			}
		case []any:
		default:
			if prefix == "" {
				prefix = "$"
			}
			out[prefix] = canonicalJSON(x)
		}
	}
	walk("", v, 0)
	return out
}

// validFieldKey: a key a field path can name (no dot, not a number, not $).
func validFieldKey(k string) bool {
	if k == "" || k == "$" || strings.Contains(k, ".") {
		return false
	}
	return !digits.MatchString(k)
}

var digits = regexp.MustCompile(`^[0-9]+$`)

func canonicalJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// valuePredicate is a value predicate to declare: its predicate, how it
// is written, and what the miner needs to know of it.
type valuePredicate struct {
	named  predicate.Named
	raw    map[string]any // the predicate as the block writes it
	tool   string         // the tool's name
	base   string         // the tool's predicate
	field  string
	values []string // canonical JSON, sorted
	calls  int
	once   int
}

// unseen is Good-Turing's estimate, plus one: the probability that a new
// call shows a value not seen.
func (v valuePredicate) unseen() float64 { return float64(v.once+1) / float64(v.calls+1) }

// valuePredicates are the fields worth proposing: present at every call of
// their tool, at most maxValues values of one kind (strings, or numbers,
// booleans and null; not both booleans alone, which any boolean is), each
// string short, and a new call unlikely to show another value. The fewest
// values first, then the likeliest to hold; at most maxPerTool of a tool and
// maxValuePredicates in all. Names are the tool's
// predicate's name, then args or result and the field: getWeather_args_city.
func valuePredicates(fields []*fieldValues, calls map[string]int, toolPredicate map[string]string, taken map[string]bool) []valuePredicate {
	var out []valuePredicate
	for _, f := range fields {
		base, ok := toolPredicate[f.tool]
		if !ok || f.calls != calls[f.tool] || len(f.values) > maxValues {
			continue
		}
		var values []string
		strs, once := 0, 0
		long := false
		for v, n := range f.values {
			values = append(values, v)
			if strings.HasPrefix(v, `"`) {
				strs++
				var s string
				_ = json.Unmarshal([]byte(v), &s)
				long = long || len(s) > maxValueLen || strings.ContainsAny(s, "\n\r")
			}
			if n == 1 {
				once++
			}
		}
		slices.Sort(values)
		vp := valuePredicate{tool: f.tool, base: base, field: f.field, values: values, calls: f.calls, once: once}
		vacuous := slices.Equal(values, []string{"false", "true"}) // a boolean's every value
		if long || vacuous || (strs > 0 && strs < len(values)) || vp.unseen() > maxUnseen {
			continue
		}
		side, path, _ := strings.Cut(f.field, ".")
		matcher := valueMatcher(values, strs > 0)
		vp.raw = map[string]any{"tool": f.tool, side: map[string]any{path: matcher}}
		name := identifier(base + "_" + side + "_" + strings.ReplaceAll(strings.ReplaceAll(path, ".", "_"), "$", "value"))
		for b, i := name, 2; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", b, i)
		}
		var named predicate.Named
		conf := confmap.NewFromStringMap(map[string]any{"name": name, "tool": f.tool, side: map[string]any{path: matcher}})
		if err := named.Unmarshal(conf); err != nil {
			continue
		}
		taken[name] = true
		vp.named = named
		out = append(out, vp)
	}
	// fewest values first (a constant says most), then the likeliest to hold
	slices.SortStableFunc(out, func(a, b valuePredicate) int {
		return cmp.Or(cmp.Compare(len(a.values), len(b.values)), cmp.Compare(a.unseen(), b.unseen()),
			cmp.Compare(b.calls, a.calls), strings.Compare(a.named.Name, b.named.Name))
	})
	perTool := map[string]int{}
	out = slices.DeleteFunc(out, func(v valuePredicate) bool {
		perTool[v.tool]++
		return perTool[v.tool] > maxPerTool
	})
	if len(out) > maxValuePredicates {
		out = out[:maxValuePredicates]
	}
	return out
}

// valueMatcher is how args or result writes the values: a string's
// equality, a number's, boolean's or null's (bare), or for several an
// anchored regexp of the strings, or of the others' JSON text.
func valueMatcher(values []string, strs bool) any {
	if len(values) == 1 {
		var v any
		dec := json.NewDecoder(strings.NewReader(values[0]))
		dec.UseNumber()
		_ = dec.Decode(&v)
		switch x := v.(type) {
		case string:
			return map[string]any{"equals": x}
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, _ := x.Float64()
			return f
		}
		return v
	}
	alts := make([]string, len(values))
	for i, v := range values {
		if strs {
			var s string
			_ = json.Unmarshal([]byte(v), &s)
			v = s
		}
		alts[i] = regexp.QuoteMeta(v)
	}
	return "^(" + strings.Join(alts, "|") + ")$"
}
