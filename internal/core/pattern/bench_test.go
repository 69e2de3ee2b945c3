// SPDX-License-Identifier: Apache-2.0

package pattern_test

import (
	"math/rand/v2"
	"testing"

	"github.com/agentguard/agentguard/internal/core/pattern"
	"github.com/agentguard/agentguard/internal/core/texpr"
)

// BenchmarkPatterns: what each pattern's expansion costs a monitor per
// event, beside the paper's te1 written by hand (the baseline), over 1024
// random events where each predicate holds at one event in four.
func BenchmarkPatterns(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	evs := make([]texpr.Event, 1024)
	for i := range evs {
		for p := range preds {
			if r.IntN(4) == 0 {
				evs[i].Bits |= 1 << p
			}
		}
		evs[i].Ref = i
	}
	cases := []struct {
		name string
		kind string
		expr string
	}{{"baseline_te1", pattern.Always, "a >> b + c"}}
	for _, name := range pattern.Names() {
		p := template(b, name)
		params := map[string]any{}
		for _, a := range p.Args {
			switch {
			case a.Events == nil:
				params[a.Name] = 3
			case a.Name == "tools":
				params[a.Name] = []any{"b", "d"}
			default:
				params[a.Name] = a.Events[0]
			}
		}
		p, err := pattern.New(name, params, preds)
		if err != nil {
			b.Fatal(err)
		}
		cases = append(cases, struct{ name, kind, expr string }{name, p.Kind, p.Expr})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e, err := texpr.Parse(c.expr, preds)
			if err != nil {
				b.Fatal(err)
			}
			a := texpr.Assertion{Expr: e, Never: c.kind == pattern.Never, Anchored: c.kind == pattern.Initially, OnEnd: texpr.EndIgnore}
			a.Compile()
			m := texpr.NewMonitorOf(&a)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				m.Step(evs[i%len(evs)])
				if i%len(evs) == len(evs)-1 {
					m.Finish()
				}
			}
		})
	}
}
