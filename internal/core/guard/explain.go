// SPDX-License-Identifier: Apache-2.0

package guard

import (
	"fmt"
	"math"
	"strconv"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

// Explain says in words what a decision found: the state, P_safe against
// θ, and the most likely way to unsafe. It is written for many decisions a
// second (a crossing report annotates every crossing): one buffer, no fmt.
func (g *Guard) Explain(d Decision) string {
	b := make([]byte, 0, 256)
	switch {
	case d.Violation:
		b = append(b, "unsafe state reached ("...)
		b = append(b, g.violated(d)...)
		b = append(b, "): "...)
		return string(g.appendFullState(b, d))
	case !d.Known:
		b = append(b, "state never seen in training, P(stay safe) not known: "...)
		return string(g.appendFullState(b, d))
	}
	cmp := " ≥ "
	if d.Below {
		cmp = " < "
	}
	if g.opts.DecideOn == DecideLowerBound && !math.IsNaN(d.PSafeLow) {
		// What decided is the interval's lower bound: it is what is compared.
		b = appendProb(append(b, "P(stay safe) = "...), d.PSafe)
		b = appendProb(append(b, ", its credible interval's lower bound "...), d.PSafeLow)
	} else {
		b = appendProb(append(b, "P(stay safe) = "...), d.PSafe)
	}
	b = appendProb(append(b, cmp...), g.opts.Threshold)
	b = g.appendFullState(append(b, " in state "...), d)
	if d.Evidence.Risk > 0 {
		b = g.appendMove(append(b, "; most likely way to unsafe: "...), d.State, d.Evidence)
		b = appendProb(append(b, ", p = "...), d.Evidence.Prob)
	}
	if d.Evidence.Risk > 0 && d.Evidence.State == d.Index {
		if step, ok := g.riskiestChange(d.Index); ok {
			b = g.appendMove(append(b, "; riskiest change: "...), d.State, step)
			b = appendProb(append(b, ", p = "...), step.Prob)
		}
	}
	return string(b)
}

// appendFullState is the state in words, and the monitor's if there is one.
func (g *Guard) appendFullState(b []byte, d Decision) []byte {
	b = g.appendState(b, d.State)
	if g.monitor != nil && d.Monitor != dtmc.Idle {
		b = append(append(b, "; "...), g.describeMonitor(d.Monitor)...)
	}
	return b
}

// riskiestChange is the evidence among the moves out of state i, when the
// evidence proper is staying in it: what a person would watch for next.
// The response product has no such plain row; it reports none.
func (g *Guard) riskiestChange(i int) (dtmc.Evidence, bool) {
	if g.monitor != nil {
		return dtmc.Evidence{}, false
	}
	cols, probs := g.model.Chain().Row(i)
	best := dtmc.Evidence{Risk: 0}
	for k, t := range cols {
		if int(t) == i {
			continue
		}
		if r := probs[k] * (1 - g.safety.PSafe(int(t))); r > best.Risk {
			best = dtmc.Evidence{State: int(t), Prob: probs[k], Risk: r}
		}
	}
	return best, best.Risk > 0
}

func (g *Guard) violated(d Decision) string {
	if g.monitor != nil && d.Monitor == g.monitor.Viol() {
		p := g.opts.Property
		return fmt.Sprintf("%s not followed by %s within %d events", p.Trigger, p.Response, p.Within)
	}
	return g.opts.Property.Unsafe
}

// DescribeState names a state by its predicates: those that hold, then
// "not" those that do not.
func (g *Guard) DescribeState(s dtmc.State) string { return string(g.appendState(nil, s)) }

func (g *Guard) appendState(b []byte, s dtmc.State) []byte {
	if s == dtmc.End {
		return append(b, "end"...)
	}
	names := g.model.Spec().Predicates
	first := true
	for _, holds := range []uint64{1, 0} {
		for i, name := range names {
			if uint64(s)>>uint(i)&1 != holds {
				continue
			}
			if !first {
				b = append(b, ", "...)
			}
			if holds == 0 {
				b = append(b, "not "...)
			}
			b, first = append(b, name...), false
		}
	}
	return b
}

// DescribeMove names the move from s to the evidence's successor by what
// changes.
func (g *Guard) DescribeMove(s dtmc.State, e dtmc.Evidence) string {
	return string(g.appendMove(nil, s, e))
}

func (g *Guard) appendMove(b []byte, s dtmc.State, e dtmc.Evidence) []byte {
	t := g.model.States()[e.State]
	if t == dtmc.End {
		return append(b, "the run ends"...)
	}
	changed := false
	for i, name := range g.model.Spec().Predicates {
		was, is := uint64(s)>>uint(i)&1, uint64(t)>>uint(i)&1
		if was == is {
			continue
		}
		if changed {
			b = append(b, " and "...)
		}
		b, changed = append(b, name...), true
		if is == 1 {
			b = append(b, " becomes true"...)
		} else {
			b = append(b, " becomes false"...)
		}
	}
	if !changed {
		return append(b, "one more event in this state"...)
	}
	return b
}

func (g *Guard) describeMonitor(q dtmc.MonitorState) string {
	if q == g.monitor.Viol() {
		return "response overdue"
	}
	return fmt.Sprintf("waiting for %s, %d events left", g.opts.Property.Response, int(q))
}

// StateName is the state as the model file names it ("01", "end").
func (g *Guard) StateName(s dtmc.State) string { return s.Name(len(g.model.Spec().Predicates)) }

// HoldingPredicates lists the predicates that hold in s.
func (g *Guard) HoldingPredicates(s dtmc.State) []string {
	var on []string
	for i, name := range g.model.Spec().Predicates {
		if s != dtmc.End && uint64(s)>>uint(i)&1 == 1 {
			on = append(on, name)
		}
	}
	return on
}

// appendProb writes p as %.4g does.
func appendProb(b []byte, p float64) []byte { return strconv.AppendFloat(b, p, 'g', 4, 64) }
