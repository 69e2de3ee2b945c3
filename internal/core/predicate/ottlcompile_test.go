// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// compareScalars is OTTL's ValueComparator on every pair of a grid of
// scalars, under every operator.
func TestCompareScalarsIsOTTLs(t *testing.T) {
	grid := []scalar{
		{kind: jsonNull}, {kind: jsonBool}, {kind: jsonBool, b: true},
		{kind: jsonInt, i: -3}, {kind: jsonInt}, {kind: jsonInt, i: 7}, {kind: jsonInt, i: math.MaxInt64},
		{kind: jsonFloat, f: -3}, {kind: jsonFloat, f: 6.999}, {kind: jsonFloat, f: 7}, {kind: jsonFloat, f: math.Copysign(0, -1)},
		{kind: jsonFloat, f: math.NaN()}, {kind: jsonFloat, f: math.Inf(1)}, {kind: jsonFloat, f: 9.223372036854776e18},
		{kind: jsonStr}, {kind: jsonStr, s: "kitchen"}, {kind: jsonStr, s: "kitchen2"}, {kind: jsonStr, s: "7"}, {kind: jsonStr, s: "true"},
	}
	ops := map[compareOp]func(ottl.ValueComparator, any, any) bool{
		opEq: ottl.ValueComparator.Equal, opNe: ottl.ValueComparator.NotEqual, opLt: ottl.ValueComparator.Less,
		opLe: ottl.ValueComparator.LessEqual, opGt: ottl.ValueComparator.Greater, opGe: ottl.ValueComparator.GreaterEqual,
	}
	c := ottl.NewValueComparator()
	for _, a := range grid {
		for _, b := range grid {
			for op, want := range ops {
				if got, w := compareScalars(a, b, op), want(c, a.raw(), b.raw()); got != w {
					t.Errorf("%#v %d %#v: %v, OTTL %v", a.raw(), op, b.raw(), got, w)
				}
			}
		}
	}
}

// raw is the value OTTL's getters give for v.
func (v scalar) raw() any {
	switch v.kind {
	case jsonBool:
		return v.b
	case jsonInt:
		return v.i
	case jsonFloat:
		return v.f
	case jsonStr:
		return v.s
	}
	return nil
}

// What compiles, and what stays OTTL's.
func TestCompileOTTLSubset(t *testing.T) {
	for text, want := range map[string]bool{
		`span.attributes["a"] == "x"`:                                                       true,
		`resource.attributes["service.name"] != nil and not true`:                           true,
		`ParseJSON(span.attributes["a"])["b"]["c"] >= 7.5 or false`:                         true,
		`not (ParseJSON(ParseJSON(span.attributes["a"])["b"])["c"] < 3)`:                    true,
		`"kitchen" == ParseJSON(span.attributes["a"])["room"]`:                              true,
		`ParseJSON(span.attributes["a"]) == nil`:                                            false, // a whole map
		`span.attributes["a"]["b"] == 1`:                                                    false, // an index into an attribute
		`span.name == "x"`:                                                                  false,
		`IsMatch(span.attributes["a"], "x")`:                                                false,
		`span.attributes["a"] == "say \"hi\""`:                                              false, // escapes
		`span.attributes["a"] == -1`:                                                        false,
		`span.attributes["a"] == 1.`:                                                        false,
		`span.attributes["a"] == 1e3`:                                                       false,
		`ParseJSON(span.attributes["a"])[0] == 1`:                                           false,
		`span.attributes["a"] == 1 + 2`:                                                     false,
		`(span.attributes["a"] == 1`:                                                        false,
		`span.attributes["a"] == 1 and`:                                                     false,
		`Len(span.attributes["a"]) > 2`:                                                     false,
		`span.attributes["a"] == ParseJSON(span.attributes["b"])["c"]`:                      true,
		`true and (false or resource.attributes["x"] == 3) and not false`:                   true,
		`ParseJSON(span.attributes["a"])["b"] == 1 and span.kind == "x"`:                    false,
		`span.attributes["a"] =~ "x"`:                                                       false,
		`span.attributes["a"] == true`:                                                      true,
		`span.attributes["a"] == 9223372036854775808`:                                       false, // out of int64
		`span.attributes["a"] == 00012`:                                                     true,
		`ParseJSON(span.attributes["a"])["b"]["c"] != ParseJSON(span.attributes["a"])["b"]`: true,
	} {
		var plan readPlan
		if got := compileOTTL(text, &plan) != nil; got != want {
			t.Errorf("%s: compiled %v, want %v", text, got, want)
		}
		if !want && (plan.slots != 0 || len(plan.docs) != 0) {
			t.Errorf("%s: not compiled, yet the plan grew: %+v", text, plan)
		}
	}
}

// compiledPair compiles cfg with compiled conditions, and with every
// condition through OTTL, each counting its evaluation errors by predicate.
func compiledPair(t testing.TB, cfg Config) (compiled, viaOTTL *Set, errs [2]map[string]int) {
	t.Helper()
	for i, native := range []bool{true, false} {
		errs[i] = map[string]int{}
		s, err := compile(cfg, Settings{Telemetry: componenttest.NewNopTelemetrySettings(),
			OnError: func(p string, _ error) { errs[i][p]++ }}, native)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			compiled = s
		} else {
			viaOTTL = s
		}
	}
	return compiled, viaOTTL, errs
}

// sameEval checks both sets say the same of one span, latches included.
func sameEval(t testing.TB, a, b *Set, la, lb *Latch, l located) {
	t.Helper()
	ok1, sig1 := a.Eval(l.rs, l.ss, l.span)
	ok2, sig2 := b.Eval(l.rs, l.ss, l.span)
	if ok1 != ok2 || sig1 != sig2 {
		out, _ := l.span.Attributes().Get("output.value")
		t.Fatalf("span %q (output %.300s): compiled (%v, %b), OTTL (%v, %b)", l.span.Name(), out.AsString(), ok1, sig1, ok2, sig2)
	}
	if ok1 && la.Step(sig1) != lb.Step(sig2) {
		t.Fatalf("span %q: the latches differ", l.span.Name())
	}
}

// The household example's conditions, compiled, give OTTL's truth at every
// span of its episodes, and at tool spans whose output was changed every
// way the compiled form must decline or read right; the errors OTTL counts
// are counted the same.
func TestCompiledConditionsAreOTTLs(t *testing.T) {
	cfg := householdConfig(t)
	compiled, viaOTTL, errs := compiledPair(t, cfg)
	n := 0
	for _, c := range append(compiled.conds, compiled.events) {
		if c.compiled != nil {
			n++
		}
	}
	if n != 6 { // the events condition and the five JSON predicates
		t.Fatalf("%d household conditions compiled, want 6", n)
	}
	la, lb := compiled.NewLatch(), viaOTTL.NewLatch()
	spans := householdSpans(t)
	for _, l := range spans {
		sameEval(t, compiled, viaOTTL, &la, &lb, l)
	}
	mutated := 0
	for _, l := range spans {
		out, ok := l.span.Attributes().Get("output.value")
		if !ok || !strings.Contains(out.Str(), "ToolMessage") {
			continue
		}
		for _, text := range outputVariants(out.Str()) {
			m := withOutput(l, text)
			sameEval(t, compiled, viaOTTL, &la, &lb, m)
			mutated++
		}
	}
	if mutated < 1000 {
		t.Fatalf("%d mutated spans", mutated)
	}
	if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) || len(errs[1]) == 0 {
		t.Errorf("errors counted: compiled %v, OTTL %v", errs[0], errs[1])
	}
}

// withOutput is l's span with output.value set to text (a copy).
func withOutput(l located, text string) located {
	rs := ptrace.NewResourceSpans()
	l.rs.Resource().CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	sp := ss.Spans().AppendEmpty()
	l.span.CopyTo(sp)
	sp.Attributes().PutStr("output.value", text)
	return located{rs, ss, sp}
}

// outputVariants are an OpenInference tool output changed: in the state
// the tool returned (a field missing, null, of another type, duplicated, an
// object), in its wrapping, and into text that is not JSON.
func outputVariants(out string) []string {
	const open = `"content":"`
	i := strings.Index(out, open)
	j := strings.Index(out, `","tool_call_id"`)
	if i < 0 || j < 0 {
		return nil
	}
	head, content, tail := out[:i+len(open)], out[i+len(open):j], out[j:]
	with := func(c string) string { return head + c + tail }
	var vs []string
	for _, f := range []string{"room", "minutes_away_with_stove_on", "unsafe", "pasta_in_pot", "package_inside", "groceries_inside", "phone_answered"} {
		key := `\"` + f + `\":`
		k := strings.Index(content, key)
		if k < 0 {
			continue
		}
		end := k + len(key) + strings.IndexAny(content[k+len(key):], ",}")
		before, after := content[:k], content[end:]
		for _, v := range []string{`null`, `true`, `false`, `7`, `7.0`, `5`, `4.9999`, `1e1`, `-0`, `\"kitchen\"`, `\"hall\"`, `\"true\"`, `{}`, `[1]`, `{\"a\":1}`, `\"kit\\\\u0063hen\"`} {
			vs = append(vs, with(before+key+v+after))
		}
		vs = append(vs,
			with(strings.TrimPrefix(strings.Replace(before+after, "{,", "{", 1), ",")), // missing
			with(before+key+`true,`+key+`false`+after),                                 // duplicated: the last wins
			with(before+` `+key+` 7 `+after),
		)
	}
	vs = append(vs,
		with(`[`+content+`]`), with(`not json`), with(content+`x`), with(`{\"room\":\"kitchen\"`), with(``),
		with(`{\"room\":\"hall\",\"minutes_away_with_stove_on\":9,\"unsafe\":true,\"pasta_in_pot\":1,\"phone_answered\":true,\"package_inside\":\"yes\",\"groceries_inside\":null}`),
		with(strings.Repeat(`{\"a\":`, 1100)+`1`+strings.Repeat(`}`, 1100)),
		strings.Replace(out, `"output":{`, `"output":{"kwargs":null,`, 1),
		strings.Replace(out, `"kwargs":{`, `"kwargs":{"content":1,`, 1),
		strings.Replace(out, `"kwargs":{`, `"kwargs":[{`, 1),
		`{"output":"`+content+`"}`, `[`+out+`]`, out+` `, ` `+out, out+`}`, `{}`, `null`, `7`,
	)
	return vs
}

// Beyond the household's: every operator, nil, bools ordered, an integer
// literal against a JSON number, negation, two reads compared, a read of a
// key that holds an object, and attributes of each type.
var fuzzConditions = []string{
	`ParseJSON(span.attributes["j"])["a"] < 3`,
	`ParseJSON(span.attributes["j"])["a"] == nil or ParseJSON(span.attributes["j"])["b"] <= true`,
	`not (ParseJSON(span.attributes["j"])["a"] > 2 and ParseJSON(span.attributes["j"])["b"]["c"] != "x")`,
	`ParseJSON(span.attributes["j"])["a"] >= ParseJSON(span.attributes["j"])["b"]`,
	`ParseJSON(ParseJSON(span.attributes["j"])["s"])["a"] == 1`,
	`ParseJSON(span.attributes["j"])["b"] == nil`,
	`span.attributes["n"] > 2 or span.attributes["j"] == "x" or resource.attributes["r"] != nil`,
	`ParseJSON(span.attributes["j"])["a"] != 1.5 and true`,
}

// FuzzCompiledConditions: for any JSON-ish text and attribute values, the
// compiled conditions give OTTL's truth, and fail where OTTL fails.
func FuzzCompiledConditions(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":{"c":"x"},"s":"{\"a\":1}"}`, `{"a":null,"b":true}`, `{"a":"3","a":2}`, `[1]`, `{"b":{"c":"y"},"b":1}`, `{"a":1e400}`, `{"a":01}`, `{"a":3,"b":{"c":"y"},"b":1}`, `{"a":3,"b":{"c":"y"},"b":{}}`} {
		f.Add(s, int64(3), "x")
	}
	cfg := Config{}
	for i, c := range fuzzConditions {
		cfg.Predicates = append(cfg.Predicates, Named{Name: fmt.Sprint("p", i), Predicate: Predicate{Condition: c}})
	}
	events := Predicate{Condition: "true"}
	cfg.Events = &events
	compiled, viaOTTL, errs := compiledPair(f, cfg)
	for _, c := range compiled.conds {
		if c.compiled == nil {
			f.Fatalf("not compiled: %s", fuzzConditions[c.bit])
		}
	}
	la, lb := compiled.NewLatch(), viaOTTL.NewLatch()
	f.Fuzz(func(t *testing.T, j string, n int64, r string) {
		rs := ptrace.NewResourceSpans()
		if r != "" {
			rs.Resource().Attributes().PutStr("r", r)
		}
		ss := rs.ScopeSpans().AppendEmpty()
		sp := ss.Spans().AppendEmpty()
		sp.Attributes().PutStr("j", j)
		if n%3 == 0 {
			sp.Attributes().PutInt("n", n)
		} else {
			sp.Attributes().PutDouble("n", float64(n)/2)
		}
		sameEval(t, compiled, viaOTTL, &la, &lb, located{rs, ss, sp})
		if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
			t.Fatalf("errors counted: compiled %v, OTTL %v", errs[0], errs[1])
		}
	})
}

// An attribute of each type reads as OTTL reads it.
func TestCompiledAttributesOfEveryType(t *testing.T) {
	cfg := Config{Events: &Predicate{Condition: "true"}}
	values := map[string]func(pcommon.Map){
		"str":   func(m pcommon.Map) { m.PutStr("a", "7") },
		"int":   func(m pcommon.Map) { m.PutInt("a", 7) },
		"float": func(m pcommon.Map) { m.PutDouble("a", 7) },
		"bool":  func(m pcommon.Map) { m.PutBool("a", true) },
		"empty": func(m pcommon.Map) { m.PutEmpty("a") },
		"bytes": func(m pcommon.Map) { m.PutEmptyBytes("a").FromRaw([]byte("7")) },
		"map":   func(m pcommon.Map) { m.PutEmptyMap("a").PutStr("b", "c") },
		"slice": func(m pcommon.Map) { m.PutEmptySlice("a").AppendEmpty().SetInt(7) },
		"none":  func(pcommon.Map) {},
	}
	for i, lit := range []string{`7`, `7.0`, `"7"`, `true`, `nil`} {
		for j, op := range []string{"==", "!=", "<", ">="} {
			cfg.Predicates = append(cfg.Predicates, Named{Name: fmt.Sprintf("p%d_%d", i, j), Predicate: Predicate{Condition: `span.attributes["a"] ` + op + ` ` + lit}})
		}
	}
	compiled, viaOTTL, _ := compiledPair(t, cfg)
	la, lb := compiled.NewLatch(), viaOTTL.NewLatch()
	for name, put := range values {
		rs := ptrace.NewResourceSpans()
		ss := rs.ScopeSpans().AppendEmpty()
		sp := ss.Spans().AppendEmpty()
		sp.SetName(name)
		put(sp.Attributes())
		sameEval(t, compiled, viaOTTL, &la, &lb, located{rs, ss, sp})
	}
}
