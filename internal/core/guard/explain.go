package guard

import (
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

// Explain says in words what a decision found: the state, P_safe against
// θ, and the most likely way to unsafe.
func (g *Guard) Explain(d Decision) string {
	state := g.DescribeState(d.State)
	if g.monitor != nil && d.Monitor != dtmc.Idle {
		state += "; " + g.describeMonitor(d.Monitor)
	}
	switch {
	case d.Violation:
		return fmt.Sprintf("unsafe state reached (%s): %s", g.violated(d), state)
	case !d.Known:
		return fmt.Sprintf("state never seen in training, P(stay safe) not known: %s", state)
	}
	cmp := "≥"
	if d.Below {
		cmp = "<"
	}
	msg := fmt.Sprintf("P(stay safe) = %s %s %s in state %s", prob(d.PSafe), cmp, prob(g.opts.Threshold), state)
	if d.Evidence.Risk > 0 {
		msg += fmt.Sprintf("; most likely way to unsafe: %s, p = %s", g.DescribeMove(d.State, d.Evidence), prob(d.Evidence.Prob))
	}
	if d.Evidence.Risk > 0 && d.Evidence.State == d.Index {
		if step, ok := g.riskiestChange(d.Index); ok {
			msg += fmt.Sprintf("; riskiest change: %s, p = %s", g.DescribeMove(d.State, step), prob(step.Prob))
		}
	}
	return msg
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
func (g *Guard) DescribeState(s dtmc.State) string {
	if s == dtmc.End {
		return "end"
	}
	var on, off []string
	for i, name := range g.model.Spec().Predicates {
		if uint64(s)>>uint(i)&1 == 1 {
			on = append(on, name)
		} else {
			off = append(off, "not "+name)
		}
	}
	return strings.Join(append(on, off...), ", ")
}

// DescribeMove names the move from s to the evidence's successor by what
// changes.
func (g *Guard) DescribeMove(s dtmc.State, e dtmc.Evidence) string {
	t := g.model.States()[e.State]
	if t == dtmc.End {
		return "the run ends"
	}
	var changes []string
	for i, name := range g.model.Spec().Predicates {
		was, is := uint64(s)>>uint(i)&1, uint64(t)>>uint(i)&1
		switch {
		case was == 0 && is == 1:
			changes = append(changes, name+" becomes true")
		case was == 1 && is == 0:
			changes = append(changes, name+" becomes false")
		}
	}
	if len(changes) == 0 {
		return "one more event in this state"
	}
	return strings.Join(changes, " and ")
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

func prob(p float64) string { return fmt.Sprintf("%.4g", p) }
