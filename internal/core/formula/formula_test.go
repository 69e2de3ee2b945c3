// SPDX-License-Identifier: Apache-2.0

package formula

import (
	"strings"
	"testing"
)

var stove = []string{"fork_on_burner", "knob_on"}

func TestEvalTruthTables(t *testing.T) {
	preds := []string{"a", "b", "c"}
	cases := []struct {
		src  string
		want func(a, b, c bool) bool
	}{
		{"a and b", func(a, b, c bool) bool { return a && b }},
		{"a && b || c", func(a, b, c bool) bool { return a && b || c }},
		{"a or b and c", func(a, b, c bool) bool { return a || b && c }},
		{"(a or b) and c", func(a, b, c bool) bool { return (a || b) && c }},
		{"not a and b", func(a, b, c bool) bool { return !a && b }},
		{"!(a || b)", func(a, b, c bool) bool { return !(a || b) }},
		{"not not c", func(a, b, c bool) bool { return c }},
		{"a or (b or c)", func(a, b, c bool) bool { return a || b || c }},
	}
	for _, tc := range cases {
		f, err := Parse(tc.src, preds)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		for bits := uint64(0); bits < 8; bits++ {
			a, b, c := bits&1 == 1, bits&2 == 2, bits&4 == 4
			if got, want := f.Eval(bits), tc.want(a, b, c); got != want {
				t.Errorf("%q at bits %03b = %v, want %v", tc.src, bits, got, want)
			}
		}
	}
}

func TestStoveUnsafe(t *testing.T) {
	f, err := Parse("fork_on_burner and knob_on", stove)
	if err != nil {
		t.Fatal(err)
	}
	for bits, want := range []bool{false, false, false, true} {
		if f.Eval(uint64(bits)) != want {
			t.Errorf("bits %02b: got %v", bits, !want)
		}
	}
}

func TestString(t *testing.T) {
	cases := map[string]string{
		"a&&b||!c":          "a and b or not c",
		"(a or b) and c":    "(a or b) and c",
		"a or (b or c)":     "a or (b or c)",
		"((a))":             "a",
		"not (a and b)":     "not (a and b)",
		"a and (b and c)":   "a and (b and c)",
		"(a and b) and c":   "a and b and c",
		"!!a":               "not not a",
		"a or b and (c)":    "a or b and c",
		"not a or not b":    "not a or not b",
		"(not a) and not b": "not a and not b",
	}
	for src, want := range cases {
		f, err := Parse(src, []string{"a", "b", "c"})
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if got := f.String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", src, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := map[string]string{
		"fork_on_burner and knob": `col 20: unknown predicate "knob" (declared: fork_on_burner, knob_on)`,
		"(knob_on":                `col 9: missing closing ) for ( at col 1`,
		"knob_on and":             `col 12: unexpected end of formula`,
		"knob_on & knob_on":       `col 9: unexpected "&" (did you mean "&&"?)`,
		"knob_on knob_on":         `col 9: unexpected "knob_on" after the end`,
		"knob_on = 1":             `col 9: unexpected character "="`,
		"":                        `col 1: unexpected end of formula`,
		") or knob_on":            `col 1: unexpected ")"`,
	}
	for src, want := range cases {
		_, err := Parse(src, stove)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v, want prefix %q", src, err, want)
		}
	}
}

func TestTooManyPredicates(t *testing.T) {
	preds := make([]string, 65)
	for i := range preds {
		preds[i] = "p" + strings.Repeat("x", i)
	}
	if _, err := Parse("p", preds); err == nil {
		t.Fatal("65 predicates accepted")
	}
}

func TestBit63(t *testing.T) {
	preds := make([]string, 64)
	for i := range preds {
		preds[i] = "p" + strings.Repeat("x", i)
	}
	f, err := Parse(preds[63], preds)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Eval(1<<63) || f.Eval(1<<62) {
		t.Fatal("bit 63 misread")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a and b", "!(a||b)&&c", "not (a or not b)", "(((a)))", "a &", "b or"} {
		f.Add(s)
	}
	preds := []string{"a", "b", "c"}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := Parse(src, preds)
		if err != nil {
			return
		}
		printed := g.String()
		h, err := Parse(printed, preds)
		if err != nil {
			t.Fatalf("printed %q of %q does not parse: %v", printed, src, err)
		}
		if h.String() != printed {
			t.Fatalf("round trip %q -> %q", printed, h.String())
		}
		for bits := uint64(0); bits < 8; bits++ {
			if g.Eval(bits) != h.Eval(bits) {
				t.Fatalf("%q and %q differ at %03b", src, printed, bits)
			}
		}
	})
}
