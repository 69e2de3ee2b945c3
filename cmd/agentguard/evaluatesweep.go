// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/sequence"
)

// The fine sweep of θ. P_safe does not depend on θ, so one replay of each run
// gives, for every θ at once, whether and when the run is warned: a run is
// warned at θ iff one of its scored events before its violation has
// P_safe < θ, first at the first such event. Decisions change only where θ
// passes a P_safe some event has, so the sweep tries every such value: it is
// exact, with no grid to choose.

// scoredRun is one run as the guard scored it.
type scoredRun struct {
	unsafe      bool
	firstUnsafe int // index of the violation; -1 in a safe run
	// scored are the events that can warn: known states, no violation,
	// before the first violation.
	scored []scoredEvent
	starts []float64 // every event's start, in seconds
}

type scoredEvent struct {
	index int
	pSafe float64
	key   stateKey
}

// stateKey names where the guard was: the abstract state and, for a response
// property, the monitor's state, which P_safe also depends on.
type stateKey struct {
	index   int
	monitor dtmc.MonitorState
}

// scoreRuns replays every run once through g.
func scoreRuns(g *guard.Guard, runs [][]sequence.Event) []scoredRun {
	out := make([]scoredRun, len(runs))
	for i, evs := range runs {
		r := scoredRun{firstUnsafe: -1, starts: make([]float64, len(evs))}
		var run guard.Run
		for j, ev := range evs {
			r.starts[j] = float64(ev.Start) / 1e9
			d := g.Step(&run, ev.Bits)
			switch {
			case d.Violation:
				if r.firstUnsafe < 0 {
					r.firstUnsafe, r.unsafe = j, true
				}
			case d.Known && r.firstUnsafe < 0:
				r.scored = append(r.scored, scoredEvent{index: j, pSafe: d.PSafe, key: stateKey{d.Index, d.Monitor}})
			}
		}
		out[i] = r
	}
	return out
}

// firstBelow is the first scored event with P_safe ≤ p (a warning at any θ
// just above p), or -1.
func (r scoredRun) firstBelow(p float64) int {
	for _, e := range r.scored {
		if e.pSafe <= p {
			return e.index
		}
	}
	return -1
}

// sweepPoint is one θ interval of the sweep: every θ in (Above, UpTo] decides
// alike. Theta is the shortest decimal in it.
type sweepPoint struct {
	Theta       float64    `json:"theta"`
	Above       float64    `json:"theta_above"`
	UpTo        float64    `json:"theta_up_to"`
	Warned      int        `json:"unsafe_runs_warned_in_time"`
	FalseAlarms int        `json:"safe_runs_warned"`
	Pareto      bool       `json:"pareto"`
	Lead        *leadStats `json:"lead,omitempty"`
	leads       []lead
}

type lead struct {
	events  int
	seconds float64
}

// leadStats is the distribution of the lead over the unsafe runs warned in
// time, quantiles by nearest rank.
type leadStats struct {
	Runs    int       `json:"runs"`
	Events  quantiles `json:"events"`
	Seconds quantiles `json:"seconds"`
}

type quantiles struct {
	Min float64 `json:"min"`
	P10 float64 `json:"p10"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Max float64 `json:"max"`
}

// sweep tries every θ where a decision changes, from "nothing warns" to 1.
func sweep(runs []scoredRun) []sweepPoint {
	var ps []float64
	for _, r := range runs {
		for _, e := range r.scored {
			if e.pSafe < 1 {
				ps = append(ps, e.pSafe)
			}
		}
	}
	slices.Sort(ps)
	ps = slices.Compact(ps)
	// Point k warns the events at or below ps[k-1]; point 0 none of them.
	points := make([]sweepPoint, len(ps)+1)
	for k := range points {
		above, upTo := 0.0, 1.0
		if k > 0 {
			above = ps[k-1]
		}
		if k < len(ps) {
			upTo = ps[k]
		}
		pt := sweepPoint{Theta: shortestIn(above, upTo), Above: above, UpTo: upTo}
		for _, r := range runs {
			i := -1
			if k > 0 {
				i = r.firstBelow(above)
			}
			switch {
			case i < 0:
			case r.unsafe:
				pt.Warned++
				pt.leads = append(pt.leads, lead{r.firstUnsafe - i, r.starts[r.firstUnsafe] - r.starts[i]})
			default:
				pt.FalseAlarms++
			}
		}
		pt.Lead = leadStatsOf(pt.leads)
		points[k] = pt
	}
	markPareto(points)
	return points
}

// markPareto marks the points no other beats on both warned in time and false
// alarms. Both only grow with θ, so a point is on the front when it warns
// more unsafe runs than every point below it.
func markPareto(points []sweepPoint) {
	best := -1
	for k := range points {
		if points[k].Warned > best {
			points[k].Pareto, best = true, points[k].Warned
		}
	}
}

// shortestIn is the decimal with the fewest digits in (lo, hi].
func shortestIn(lo, hi float64) float64 {
	for digits := 0; digits <= 17; digits++ {
		scale := math.Pow(10, float64(digits))
		if v := math.Floor(hi*scale) / scale; v > lo {
			return v
		}
	}
	return hi
}

func leadStatsOf(leads []lead) *leadStats {
	if len(leads) == 0 {
		return nil
	}
	ev := make([]float64, len(leads))
	sec := make([]float64, len(leads))
	for i, l := range leads {
		ev[i], sec[i] = float64(l.events), l.seconds
	}
	return &leadStats{Runs: len(leads), Events: quantilesOf(ev), Seconds: quantilesOf(sec)}
}

func quantilesOf(v []float64) quantiles {
	slices.Sort(v)
	at := func(q float64) float64 { return v[max(0, int(math.Ceil(q*float64(len(v))))-1)] }
	return quantiles{Min: v[0], P10: at(0.1), P50: at(0.5), P90: at(0.9), Max: v[len(v)-1]}
}

// suggestion is the θ suggested for a target false-alarm rate: the front's
// point warning the most unsafe runs in time whose false alarms stay within
// the target.
type suggestion struct {
	Target float64    `json:"target_false_alarm_rate"`
	Point  sweepPoint `json:"point"`
}

func suggest(points []sweepPoint, safe int, target float64) *suggestion {
	var best *sweepPoint
	for k := range points {
		p := &points[k]
		if p.Pareto && rate(p.FalseAlarms, safe) <= target && (best == nil || p.Warned > best.Warned) {
			best = p
		}
	}
	if best == nil {
		return nil // point 0 warns nothing, so this does not happen
	}
	return &suggestion{Target: target, Point: *best}
}

func rate(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// calibrationRow compares a state's P_safe with what became of the groups
// that were there: each group counts once a state, at its first visit before
// any violation, and stayed safe if it never reached the unsafe state.
type calibrationRow struct {
	State      string  `json:"state"`
	Holding    string  `json:"holding"`
	PSafe      float64 `json:"p_safe"`
	Groups     int     `json:"groups"`
	StayedSafe int     `json:"stayed_safe"`
	Observed   float64 `json:"observed"`
	// The state's credible interval of P_safe (without one: nil), and
	// whether the observed share falls in it.
	Low        *float64 `json:"p_safe_low,omitempty"`
	High       *float64 `json:"p_safe_high,omitempty"`
	InInterval *bool    `json:"observed_in_interval,omitempty"`
}

// calibration is the table with its Brier score: the mean squared difference
// between P_safe and the outcome (1 stayed safe, 0 not) over the same
// (group, state) pairs, beside the score of predicting the pairs' overall
// share for every one (a forecast that knows nothing of the state).
type calibration struct {
	States        []calibrationRow `json:"states"`
	Predictions   int              `json:"predictions"`
	Brier         float64          `json:"brier"`
	BrierBaseRate float64          `json:"brier_base_rate"`
	// Coverage: of the states with at least coverageGroups groups and an
	// interval, how many have their observed share in it.
	Covered, CoverageStates int
}

// coverageGroups is the fewest groups whose observed share a coverage count
// takes: below it the share itself is too noisy to say anything.
const coverageGroups = 20

func calibrate(g *guard.Guard, runs []scoredRun) *calibration {
	rows := map[stateKey]*calibrationRow{}
	var brier float64
	var n, safe int
	for _, r := range runs {
		seen := map[stateKey]bool{}
		for _, e := range r.scored {
			if seen[e.key] {
				continue
			}
			seen[e.key] = true
			row := rows[e.key]
			if row == nil {
				row = &calibrationRow{State: stateName(g, e.key), Holding: holding(g, e.key), PSafe: e.pSafe}
				rows[e.key] = row
			}
			row.Groups++
			outcome := 0.0
			if !r.unsafe {
				row.StayedSafe++
				outcome = 1
				safe++
			}
			brier += (e.pSafe - outcome) * (e.pSafe - outcome)
			n++
		}
	}
	c := &calibration{Predictions: n, States: []calibrationRow{}}
	if n == 0 {
		return c
	}
	base := float64(safe) / float64(n)
	c.Brier = brier / float64(n)
	c.BrierBaseRate = base * (1 - base) // the mean of (base - outcome)² over the pairs
	for key, row := range rows {
		row.Observed = float64(row.StayedSafe) / float64(row.Groups)
		c.cover(g, key, row)
		c.States = append(c.States, *row)
	}
	slices.SortFunc(c.States, func(a, b calibrationRow) int {
		return cmp.Or(cmp.Compare(a.PSafe, b.PSafe), strings.Compare(a.State, b.State))
	})
	return c
}

// cover sets the row's interval, and counts it in the coverage.
func (c *calibration) cover(g *guard.Guard, k stateKey, row *calibrationRow) {
	iv, ok := g.Interval(k.index)
	if !ok {
		return
	}
	in := iv.Low <= row.Observed && row.Observed <= iv.High
	row.Low, row.High, row.InInterval = &iv.Low, &iv.High, &in
	if row.Groups >= coverageGroups {
		c.CoverageStates++
		if in {
			c.Covered++
		}
	}
}

func stateName(g *guard.Guard, k stateKey) string {
	name := g.Model().StateName(k.index)
	if g.Options().Property.Kind == dtmc.Response {
		name += "/q" + strconv.Itoa(int(k.monitor))
	}
	return name
}

func holding(g *guard.Guard, k stateKey) string {
	on := g.HoldingPredicates(g.Model().States()[k.index])
	if len(on) == 0 {
		return "(none)"
	}
	return strings.Join(on, ", ")
}

// formatTheta prints a θ interval's shortest decimal.
func formatTheta(p sweepPoint) string { return strconv.FormatFloat(p.Theta, 'g', -1, 64) }

// describeInterval says which θ decide as p does.
func describeInterval(p sweepPoint) string {
	return fmt.Sprintf("any θ in (%.4g, %.4g]", p.Above, p.UpTo)
}
