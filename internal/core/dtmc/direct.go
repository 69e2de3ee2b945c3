// SPDX-License-Identifier: Apache-2.0

package dtmc

import "math"

// roundoff is a generous unit roundoff for the residual allowances: float64's
// is 2^-53 ≈ 1.1e-16.
const roundoff = 2.3e-16

// residualNorm is a guaranteed upper bound on ‖b − (I − Q)x‖∞ over the
// maybe states.
func (sv *Solver) residualNorm(c *Chain, x []float64) float64 {
	res := 0.0
	for i := range sv.maybe {
		r, allow := sv.residual(c, i, x)
		res = max(res, math.Abs(r)+allow)
	}
	return res
}

// residual returns r = b − (I − Q)x at the i-th maybe state, with an
// allowance for the rounding of computing it.
func (sv *Solver) residual(c *Chain, i int, x []float64) (r, allow float64) {
	s := sv.maybe[i]
	cols, probs := c.Row(int(s))
	b, qx, mag := 0.0, 0.0, 0.0
	for k, t := range cols {
		switch sv.class[t] {
		case classMaybe:
			qx += probs[k] * x[t]
			mag += probs[k] * math.Abs(x[t])
		case classProb1:
			b += probs[k]
		}
	}
	r = b + qx - x[s]
	allow = float64(len(cols)+3) * roundoff * (b + mag + math.Abs(x[s]))
	return r, allow
}

// verifySteps checks a candidate τ̃ (by state; only maybe states are read)
// and returns a guaranteed upper bound on the largest expected number of
// steps to leave the maybe states: max τ̃ / c where (I − Q)τ̃ ≥ c·1, since
// (I − Q)⁻¹ is non-negative. The self-loop is kept apart, as (1 − P(s|s))·τ̃,
// so that the rounding allowance scales with the steps that leave s rather
// than with τ̃ itself: on a chain with self-loops of 0.99999 that is 10⁵
// times smaller, which keeps τ̃ ≈ 10¹⁴ verifiable.
func (sv *Solver) verifySteps(c *Chain, tau []float64) (float64, bool) {
	cmin, tmax := math.Inf(1), 0.0
	for _, s := range sv.maybe {
		ts := tau[s]
		if !(ts >= 0) {
			return 0, false
		}
		cols, probs := c.Row(int(s))
		qt, self := 0.0, 0.0
		for k, t := range cols {
			switch {
			case t == s:
				self = probs[k]
			case sv.class[t] == classMaybe:
				qt += probs[k] * tau[t]
			}
		}
		// 1 − self is exact for self ≥ ½ and within a roundoff otherwise.
		dt := (1 - self) * ts
		allow := float64(len(cols)+4) * roundoff * (dt + qt)
		cmin = min(cmin, dt-qt-allow)
		tmax = max(tmax, ts)
	}
	if !(cmin > 0) {
		return 0, false
	}
	// One more roundoff for the division itself.
	return tmax / cmin * (1 + roundoff), true
}
