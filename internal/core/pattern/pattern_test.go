// SPDX-License-Identifier: Apache-2.0

package pattern_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/pattern"
	"github.com/agentguard/agentguard/internal/core/texpr"
)

var preds = []string{"a", "b", "c", "d"}

// seq is a group's events: bit i of an event is preds[i].
type seq []uint64

// any is whether one of the predicates of an event parameter holds at cycle
// c (1-based).
func (s seq) any(names []string, c int) bool {
	for _, n := range names {
		if s[c-1]&(1<<slices.Index(preds, n)) != 0 {
			return true
		}
	}
	return false
}

// meaning is each pattern written directly from its plain words, knowing
// the whole group: the verdicts it should give, "V<cycle>" for a violation
// decided at that event, "P<cycle>" for an obligation from that event still
// open when the group ends. It shares nothing with the expansions.
var meaning = map[string]func(p pattern.Pattern, s seq) []string{
	// x happens at least once in the group: else a violation at its end.
	"requires": func(p pattern.Pattern, s seq) []string {
		for c := 1; c <= len(s); c++ {
			if s.any(ev(p, "x"), c) {
				return nil
			}
		}
		return []string{v(len(s))}
	},
	// no y before the first x: the first event that is either must be x.
	"before": func(p pattern.Pattern, s seq) []string {
		for c := 1; c <= len(s); c++ {
			switch {
			case s.any(ev(p, "x"), c):
				return nil
			case s.any(ev(p, "y"), c):
				return []string{v(c)}
			}
		}
		return nil
	},
	// x never happens: every x is a violation.
	"never": func(p pattern.Pattern, s seq) []string {
		var out []string
		for c := 1; c <= len(s); c++ {
			if s.any(ev(p, "x"), c) {
				out = append(out, v(c))
			}
		}
		return out
	},
	// once x happened, y never does: every y after an x is a violation.
	"never_after": func(p pattern.Pattern, s seq) []string {
		var out []string
		seen := false
		for c := 1; c <= len(s); c++ {
			if seen && s.any(ev(p, "y"), c) {
				out = append(out, v(c))
			}
			seen = seen || s.any(ev(p, "x"), c)
		}
		return out
	},
	// every x is followed by y within k events: else a violation k events
	// after it, or pending when the group ends before that.
	"response": func(p pattern.Pattern, s seq) []string {
		var out []string
		k := p.Args[2].Count
		for i := 1; i <= len(s); i++ {
			if !s.any(ev(p, "x"), i) {
				continue
			}
			answered := false
			for j := i + 1; j <= min(i+k, len(s)); j++ {
				answered = answered || s.any(ev(p, "y"), j)
			}
			switch {
			case answered:
			case i+k <= len(s):
				out = append(out, v(i+k))
			default:
				out = append(out, fmt.Sprintf("P%d", i))
			}
		}
		return out
	},
	// x at most n times: every x past the n-th is a violation.
	"max_calls": func(p pattern.Pattern, s seq) []string {
		var out []string
		count := 0
		for c := 1; c <= len(s); c++ {
			if s.any(ev(p, "x"), c) {
				if count++; count > p.Args[1].Count {
					out = append(out, v(c))
				}
			}
		}
		return out
	},
	// x at most n times in a row: every x that makes the run longer than n
	// is a violation.
	"max_consecutive": func(p pattern.Pattern, s seq) []string {
		var out []string
		run := 0
		for c := 1; c <= len(s); c++ {
			run = (run + 1) * b2i(s.any(ev(p, "x"), c))
			if run > p.Args[1].Count {
				out = append(out, v(c))
			}
		}
		return out
	},
	// the first event is x.
	"first": func(p pattern.Pattern, s seq) []string {
		if !s.any(ev(p, "x"), 1) {
			return []string{v(1)}
		}
		return nil
	},
	// after every to, back within k events with only tools between: the
	// first event that is neither back nor an allowed tool is a violation.
	"handoff_returns": func(p pattern.Pattern, s seq) []string {
		var out []string
		k := p.Args[3].Count
		for i := 1; i <= len(s); i++ {
			if !s.any(ev(p, "to"), i) {
				continue
			}
			for j := i + 1; ; j++ {
				if j > len(s) {
					out = append(out, fmt.Sprintf("P%d", i))
					break
				}
				if s.any(ev(p, "back"), j) {
					break
				}
				if !s.any(ev(p, "tools"), j) || j == i+k {
					out = append(out, v(j))
					break
				}
			}
		}
		return out
	},
}

func v(c int) string { return fmt.Sprintf("V%d", c) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ev(p pattern.Pattern, name string) []string {
	for _, a := range p.Args {
		if a.Name == name {
			return a.Events
		}
	}
	panic(name)
}

// randomParams draws parameters for a pattern: event parameters one or two
// predicates, counts 1..4.
func randomParams(r *rand.Rand, p pattern.Pattern) map[string]any {
	out := map[string]any{}
	for _, a := range p.Args {
		if a.Events == nil {
			out[a.Name] = 1 + r.IntN(4)
			continue
		}
		names := []any{preds[r.IntN(len(preds))]}
		if r.IntN(3) == 0 {
			names = append(names, preds[r.IntN(len(preds))])
		}
		out[a.Name] = names
	}
	return out
}

// template is each pattern with placeholder parameters, to learn its
// parameters' kinds.
func template(t testing.TB, name string) pattern.Pattern {
	for _, params := range []map[string]any{
		{"x": "a"}, {"x": "a", "y": "b"}, {"x": "a", "y": "b", "k": 1}, {"x": "a", "n": 1},
		{"to": "a", "tools": "b", "back": "c", "k": 1},
	} {
		if p, err := pattern.New(name, params, preds); err == nil {
			return p
		}
	}
	t.Fatalf("no parameters fit pattern %s", name)
	return pattern.Pattern{}
}

// engine runs the pattern as the assertion config does, through the
// runner every processor and check use, and lists its verdicts as meaning
// does.
func engine(t testing.TB, p pattern.Pattern, params map[string]any, s seq) []string {
	compiled, err := assertion.Compile([]assertion.Config{{Name: "p", Pattern: map[string]any{p.Name: params}}}, preds, 0)
	if err != nil {
		t.Fatal(err)
	}
	runner := assertion.NewRunner(compiled, assertion.Options{MaxEventsPerGroup: 1 << 20})
	evs := make([]assertion.Event, len(s))
	for i, b := range s {
		evs[i] = assertion.Event{Bits: b, Time: int64(i) * 1e6, Name: fmt.Sprint("e", i+1)}
	}
	var out []string
	for _, vd := range runner.Run("g", evs, true) {
		switch {
		case vd.Violation:
			out = append(out, v(vd.End))
			if !strings.Contains(vd.Explanation, p.Name+"(") || !strings.Contains(vd.Explanation, vd.Assertion.Expression) {
				t.Fatalf("explanation without the pattern and its expansion:\n%s", vd.Explanation)
			}
		case vd.Kind.String() == "PENDING":
			out = append(out, fmt.Sprintf("P%d", vd.Start))
		default:
			t.Fatalf("unexpected verdict %+v", vd.Verdict)
		}
	}
	return out
}

// Every pattern gives, on random groups, exactly the verdicts its plain
// words give: which events violate it, and which obligations are pending.
func TestPatternsAgainstTheirMeaning(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 34))
	for _, name := range pattern.Names() {
		mean, ok := meaning[name]
		if !ok {
			t.Fatalf("pattern %s has no direct meaning in this test", name)
		}
		tmpl := template(t, name)
		violated := 0
		for i := range 1500 {
			params := randomParams(r, tmpl)
			p, err := pattern.New(name, params, preds)
			if err != nil {
				t.Fatal(err)
			}
			density := []uint64{2, 4, 8}[r.IntN(3)] // a predicate holds with probability 1/density
			s := make(seq, 1+r.IntN(14))
			for c := range s {
				for b := range preds {
					if r.Uint64N(density) == 0 {
						s[c] |= 1 << b
					}
				}
			}
			want, got := mean(p, s), engine(t, p, params, s)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("case %d: %s = %s over %v:\n got  %v\n want %v", i, p, p.Expansion, s, got, want)
			}
			if len(want) > 0 {
				violated++
			}
		}
		if violated < 100 || violated > 1400 {
			t.Errorf("%s: %d of 1500 random groups had a verdict: the test hardly discriminates", name, violated)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params any
		want   string
	}{
		{"requiers", map[string]any{"x": "a"}, `unknown pattern "requiers": the patterns are requires, before, never, never_after, response, max_calls, max_consecutive, first, handoff_returns`},
		{"requires", "a", `requires: want its parameters as a map {x}, got "a"`},
		{"requires", nil, `requires: want its parameters as a map {x}, got nothing`},
		{"response", map[string]any{"x": "a", "y": "b"}, `response: parameter k is missing (response takes x, y, k)`},
		{"never", map[string]any{"x": "a", "z": "b"}, `never: unknown parameter "z" (never takes x)`},
		{"never", map[string]any{"x": "sayHelo"}, `never: x: predicate "sayHelo" is not declared (declared: a, b, c, d)`},
		{"never", map[string]any{"x": []any{"a", 3}}, `never: x: want predicate names, got 3 (int) in the list`},
		{"never", map[string]any{"x": []any{}}, `never: x: an empty list: give at least one predicate`},
		{"never", map[string]any{"x": 3}, `never: x: want a predicate name or a list of them, got 3 (int)`},
		{"max_calls", map[string]any{"x": "a", "n": 0}, `max_calls: n: want a positive integer of at most 1048575, got 0 (int)`},
		{"max_calls", map[string]any{"x": "a", "n": 2.5}, `max_calls: n: want a positive integer of at most 1048575, got 2.5 (float64)`},
		{"max_calls", map[string]any{"x": "a", "n": "3"}, `max_calls: n: want a positive integer of at most 1048575, got "3"`},
		{"response", map[string]any{"x": "a", "y": "b", "k": -1}, `response: k: want a positive integer`},
		{"response", map[string]any{"x": "a", "y": "b", "k": 1 << 21}, `response: k: want a positive integer`},
	} {
		_, err := pattern.New(tc.name, tc.params, preds)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want %q", tc.name, tc.params, err, tc.want)
		}
	}
	// Several problems are all told, in a stable order.
	_, err := pattern.New("response", map[string]any{"x": "zz", "q": 1}, preds)
	want := "response: k: parameter k is missing"
	if err == nil || !strings.Contains(err.Error(), `unknown parameter "q"`) || !strings.Contains(err.Error(), `x: predicate "zz"`) ||
		!strings.Contains(err.Error(), "parameter k is missing") || !strings.Contains(err.Error(), "parameter y is missing") {
		t.Errorf("error %v, want all four problems (%s ...)", err, want)
	}
}

// The expansions the docs print.
func TestExpansions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"requires", map[string]any{"x": "a"}, "initially: a | ~a * (1,1048576) + a (on_end: fail)"},
		{"before", map[string]any{"x": "a", "y": "b"}, "initially: a | ~(a | b) * (1,1048576) + a (on_end: ignore)"},
		{"never", map[string]any{"x": "a"}, "never: a (on_end: ignore)"},
		{"never_after", map[string]any{"x": "a", "y": "b"}, "never: a + (b | ~a * (1,1048576) + b) (on_end: ignore)"},
		{"response", map[string]any{"x": "a", "y": "b", "k": 1}, "always: a >> b (on_end: inconclusive)"},
		{"response", map[string]any{"x": "a", "y": []any{"b", "c"}, "k": 3}, "always: a >> ((b | c) | ~(b | c) * (1,2) + (b | c)) (on_end: inconclusive)"},
		{"max_calls", map[string]any{"x": "a", "n": 2}, "never: a + (a | ~a * (1,1048576) + a) * 2 (on_end: ignore)"},
		{"max_consecutive", map[string]any{"x": "a", "n": 2}, "never: a * 3 (on_end: ignore)"},
		{"first", map[string]any{"x": "a"}, "initially: a (on_end: inconclusive)"},
		{"handoff_returns", map[string]any{"to": "a", "tools": []any{"b", "c"}, "back": "d", "k": 2}, "always: a >> (d | (b | c) * 1 + d) (on_end: inconclusive)"},
		// The paper's te3 is a response.
		{"response", map[string]any{"x": "a", "y": []any{"b", "c", "d"}, "k": 1}, "always: a >> (b | c | d) (on_end: inconclusive)"},
	} {
		p, err := pattern.New(tc.name, tc.params, preds)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Expansion.String(); got != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", p, got, tc.want)
		}
	}
}

// FuzzPatternConfig feeds assertion entries, as YAML, through the path the
// collector takes (confmap into assertion.Config, then Compile): nothing
// panics, and an accepted pattern's expansion prints back as text that
// parses to the same expression.
func FuzzPatternConfig(f *testing.F) {
	for _, seed := range []string{
		"{name: p, requires: {x: a}}",
		"{name: p, before: {x: a, y: [b, c]}}",
		"{name: p, response: {x: a, y: b, k: 3}}",
		"{name: p, max_calls: {x: a, n: 2}, on_end: fail}",
		"{name: p, handoff_returns: {to: a, tools: [b, c], back: d, k: 2}}",
		"{name: p, max_consecutive: {x: [a, a], n: 1048575}}",
		"{name: p, never: a, first: {x: a}}",
		"{name: p, never: {x: [a, b]}}",
		"{name: p, never_after: {x: a, y: 1.5}}",
		"{name: p, first: [a]}",
		"{name: p, requiers: {x: a}}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var raw map[string]any
		if yaml.Unmarshal([]byte(text), &raw) != nil || raw == nil {
			return
		}
		var cfg assertion.Config
		if confmap.NewFromStringMap(raw).Unmarshal(&cfg) != nil {
			return
		}
		compiled, err := assertion.Compile([]assertion.Config{cfg}, preds, 0)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		a := compiled[0]
		if a.Pattern == "" {
			return
		}
		again, err := texpr.Parse(a.Spec.Expr.String(), preds)
		if err != nil || !again.Equal(a.Spec.Expr) {
			t.Fatalf("%s: expansion %q prints back as %q, which parses to another expression (%v)", a.Pattern, a.Expression, a.Spec.Expr, err)
		}
		if a.Spec.Anchored != (a.Kind == pattern.Initially) || a.Spec.Never != (a.Kind == pattern.Never) {
			t.Fatalf("%s: kind %s, spec %+v", a.Pattern, a.Kind, a.Spec)
		}
	})
}
