// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var abc = []string{"a", "b", "c"}

func TestParsePrecedence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a + b >> c", "a + b >> c"},
		{"a >> b + c", "a >> b + c"},
		{"(a >> b) + c", "(a >> b) + c"},
		{"a + ok + a", "a + ok + a"},
		{"a + (ok + a)", "a + (ok + a)"},
		{"a | b & c", "a | b & c"},
		{"(a | b) & c", "(a | b) & c"},
		{"a ^ b | c", "a ^ b | c"},
		{"a & b ^ c", "a & b ^ c"},
		{"~a * 2", "~a * 2"},
		{"~(a * 2)", "~(a * 2)"},
		{"a / b * (1, 3)", "a / b * (1,3)"},
		{"a / (b * (1,3))", "a / (b * (1,3))"},
		{"a * (2)", "a * 2"},
		{"a*(0,0)", "a * 0"},
		{"~~a", "~~a"},
		{"((a))", "a"},
		{"first(a + b) | c", "first(a + b) | c"},
		{"once((a | b)) * 2", "once(a | b) * 2"},
		{"~first(once(a))", "~first(once(a))"},
	} {
		e, err := Parse(tc.in, abc)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("%q printed %q, want %q", tc.in, got, tc.want)
		}
	}
	// left associativity: a + ok + a is (a + ok) + a.
	e, _ := Parse("a + ok + a", abc)
	if e.L.Op != OpConcat || e.R.Op != OpPred {
		t.Errorf("a + ok + a parsed as %s + %s", e.L, e.R)
	}
	// >> binds looser than +: te1 is x >> (y + z).
	e, _ = Parse("a >> b + c", abc)
	if e.Op != OpCond || e.R.Op != OpConcat {
		t.Errorf("a >> b + c parsed with %v at the top", e.Op)
	}
	// a / b * 2 is (a / b) * 2, as in Python.
	e, _ = Parse("a / b * 2", abc)
	if e.Op != OpRepeat || e.L.Op != OpFusion {
		t.Errorf("a / b * 2 parsed with %v at the top", e.Op)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "col 1: expected a predicate name, '~' or '(', found end of expression"},
		{"a +", "col 4: expected a predicate name, '~' or '(', found end of expression"},
		{"(a + b", "col 7: expected ')', found end of expression"},
		{"xferToGreeting >> (sayHello + b", "unknown predicate \"xferToGreeting\" (declared: a, b, c)"},
		{"a + (b | c", "col 11: expected ')'"},
		{"a + d", "col 5: unknown predicate \"d\" (declared: a, b, c)"},
		{"a * b", "col 5: expected a repeat count n or (n,m) after '*', found name \"b\""},
		{"a * (3,1)", "col 5: repeat range (3,1) is empty"},
		{"a * (1,2", "col 9: expected ')' to close the repeat count"},
		{"a * 99999999999999999999", "col 5: repeat count 99999999999999999999 is larger than"},
		{"a b", "col 3: unexpected name \"b\" after a complete expression"},
		{"a $ b", "col 3: unexpected character '$'"},
		{"a > b", "col 3: unexpected character '>'"},
		{"é + a", "col 1: unexpected character 'é'"},
		{"a + é", "col 5: unexpected character 'é'"},
		{"last(a)", "col 1: unknown function \"last\": the functions are first(x) and once(x)"},
		{"first(a", "col 8: expected ')' to close first(, found end of expression"},
		{"once()", "col 6: expected a predicate name"},
		{"first", "col 1: unknown predicate \"first\""},
	} {
		_, err := Parse(tc.in, abc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
	if _, err := Parse("a", nil); err == nil || !strings.Contains(err.Error(), "(declared: none)") {
		t.Errorf("no predicates declared: %v", err)
	}
}

// A predicate named first or once stays usable where it stands alone.
func TestFunctionNamesAsPredicates(t *testing.T) {
	e, err := Parse("first + once(first)", []string{"first"})
	if err != nil {
		t.Fatal(err)
	}
	if e.L.Op != OpPred || e.R.Op != OpOnce || e.R.L.Op != OpPred || e.R.L.Name != "first" {
		t.Errorf("parsed as %s", e)
	}
}

// Printing any expression and parsing it back gives the same structure.
func TestPrintParseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		e := randomExpr(r, 5)
		back, err := Parse(e.String(), abc)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if !back.Equal(e) {
			t.Fatalf("%s parsed back as %s", e, back)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a + a | a + ok + a", "a >> b + c", "~(a * (1,3)) ^ b / c", "a & (b | c) * 2", "((", "a * (0,", "a + d", "first(a | b) + once(c)", "once(", "first()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src, abc)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("%q: error of type %T", src, err)
			}
			return
		}
		printed := e.String()
		back, err := Parse(printed, abc)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", src, printed, err)
		}
		if !back.Equal(e) || back.String() != printed {
			t.Fatalf("%q printed as %q parses back as %q", src, printed, back)
		}
	})
}

// FuzzEngine checks the evaluator against the oracle on fuzzed expressions and
// signals; repeats are kept small so the oracle's path enumeration stays cheap.
func FuzzEngine(f *testing.F) {
	f.Add("a + a | a + ok + a", uint64(0b01110100), uint8(8))
	f.Add("(ok + a | b) * (2,3)", uint64(0x5a5a), uint8(12))
	f.Add("~(a ^ b) >> c / a", uint64(0x1234), uint8(10))
	f.Add("first(ok * (1,3) + a) | once(a | a)", uint64(0x2b4d), uint8(9))
	f.Fuzz(func(t *testing.T, src string, bits uint64, n uint8) {
		e, err := Parse(src, abc)
		if err != nil || len(src) > 40 || maxRepeat(e) > 4 {
			return
		}
		evs := make([]Event, 1+int(n)%12)
		for i := range evs {
			evs[i] = Event{Bits: (bits >> (3 * uint(i))) & 7}
		}
		want := oracleVerdicts(e, false, len(evs), bitsOf(evs))
		if got := engineVerdicts(t, e, evs, true); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s\n got  %v\n want %v", e, got, want)
		}
	})
}

func maxRepeat(e *Expr) int {
	if e == nil {
		return 0
	}
	m := max(maxRepeat(e.L), maxRepeat(e.R))
	if e.Op == OpRepeat {
		m = max(m, e.Max)
	}
	return m
}
