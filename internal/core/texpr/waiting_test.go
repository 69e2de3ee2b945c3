// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func waitsText(ws []*Expr) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.String()
	}
	return strings.Join(parts, "; ")
}

func TestWaitsOfPaperAssertion(t *testing.T) {
	names, evs := signalEvents(map[string]string{"xferToGreeting": "1100", "sayHello": "0011", "xferToWeather": "0000"})
	e, err := Parse("xferToGreeting >> sayHello + xferToWeather", names)
	if err != nil {
		t.Fatal(err)
	}
	bits := make([]uint64, len(evs))
	for i, ev := range evs {
		bits[i] = ev.Bits
	}
	// 1 fails at 2 (no hello), 2 at 4 (hello, then no transfer back), 3 and
	// 4 match vacuously: nothing waits. 0 and 5 are not cycles of it.
	w := NewWaits(e, bits, 1000)
	for start, want := range []string{"(cannot tell)", "", "", "", "", "(cannot tell)"} {
		ws, ok := w.Of(start)
		got := waitsText(ws)
		if !ok {
			got = "(cannot tell)"
		}
		if got != want {
			t.Errorf("start %d: waits %q, want %q", start, got, want)
		}
	}
	// greeting, then hello at the end: waiting for the transfer back.
	if ws, ok := NewWaits(e, []uint64{bits[0], bits[2]}, 1000).Of(1); !ok || waitsText(ws) != "xferToWeather" {
		t.Errorf("greeting, hello: waits %q %v", waitsText(ws), ok)
	}
	// greeting last: waiting for the hello and what follows it.
	if ws, ok := NewWaits(e, bits[:1], 1000).Of(1); !ok || waitsText(ws) != "sayHello + xferToWeather" {
		t.Errorf("greeting: waits %q %v", waitsText(ws), ok)
	}
}

// Of is non-empty exactly for the evaluations the oracle and the engine
// leave live, and names only sub-expressions of the expression.
func TestWaitsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	live := 0
	for i := range 4000 {
		e := randomExpr(r, 1+r.IntN(4))
		evs := randomEvents(r, 1+r.IntN(12))
		bits := make([]uint64, len(evs))
		for j, ev := range evs {
			bits[j] = ev.Bits
		}
		o := oracle{len(evs), bitsOf(evs)}
		byStart := engineByStart(e, evs)
		w := NewWaits(e, bits, 1<<20)
		for s := 1; s <= len(evs); s++ {
			ws, ok := w.Of(s)
			if !ok {
				t.Fatalf("case %d: %s: budget exceeded", i, e)
			}
			isLive := o.eval(e, s).term == math.MaxInt
			if isLive != (len(ws) > 0) {
				t.Fatalf("case %d: %s at %d over %v: waits %q, oracle live %v", i, e, s, evs, waitsText(ws), isLive)
			}
			pending := false
			for _, v := range byStart[s] {
				pending = pending || v.kind == Pending
			}
			if pending && len(ws) == 0 {
				t.Fatalf("case %d: %s at %d over %v: the engine is pending, waits empty", i, e, s, evs)
			}
			for _, x := range ws {
				if !hasNode(e, x) {
					t.Fatalf("case %d: %s: waits for %s, not one of its nodes", i, e, x)
				}
			}
			if isLive {
				live++
			}
		}
	}
	if live < 1000 {
		t.Fatalf("only %d live evaluations checked", live)
	}
}

func hasNode(e, x *Expr) bool {
	return e != nil && (e == x || hasNode(e.L, x) || hasNode(e.R, x))
}

// A budget too small for the work says so rather than answer wrong, and
// stays spent.
func TestWaitsBudget(t *testing.T) {
	e, err := Parse("(a | ok) * (1,50) + b", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	bits := make([]uint64, 40)
	w := NewWaits(e, bits, 30)
	if _, ok := w.Of(1); ok {
		t.Fatal("a budget of 30 answered")
	}
	if _, ok := w.Of(39); ok {
		t.Fatal("a spent budget answered")
	}
	if ws, ok := NewWaits(e, bits, 1<<20).Of(1); !ok || waitsText(ws) != "a | ok; b" {
		t.Fatalf("waits %q %v", waitsText(ws), ok)
	}
}
