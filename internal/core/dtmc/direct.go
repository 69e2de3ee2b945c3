package dtmc

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// roundoff is a generous unit roundoff for the residual allowances: float64's
// is 2^-53 ≈ 1.1e-16.
const roundoff = 2.3e-16

// solveDirect solves (I − Q)x = b and (I − Q)τ = 1 on the maybe states by
// dense LU, where Q is the chain restricted to them and b the one-step
// probability into Prob1, writes x into p (clamped to [0, 1]) and τ into
// sv.sol's second column, and returns a guaranteed error bound for x:
//
//	|x̃ − x| ≤ (I − Q)⁻¹|r| ≤ ‖r‖∞ · max τ   with r = b − (I − Q)x̃,
//
// because (I − Q)⁻¹ = Σ Qⁱ is non-negative and (I − Q)⁻¹·1 = τ, the expected
// steps to leave the maybe states. τ itself comes from the same rounded
// factorization, so it is verified: if (I − Q)τ̃ ≥ c·1 with c > 0 then
// τ ≤ τ̃/c. ok is false when the factorization or the verification fails.
func (sv *Solver) solveDirect(c *Chain, p []float64) (bound float64, ok bool) {
	if !sv.factorAndSolve(c) {
		return 0, false
	}
	for i, s := range sv.maybe {
		p[s] = min(max(sv.sol[2*i], 0), 1)
	}
	sv.tau = grow(sv.tau, c.NumStates())
	for i, s := range sv.maybe {
		sv.tau[s] = sv.sol[2*i+1]
	}
	tauBound, ok := sv.verifySteps(c, sv.tau)
	if !ok {
		return 0, false
	}
	return sv.residualNorm(c, p) * tauBound * (1 + roundoff), true
}

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

// factorAndSolve builds I − Q and the two right-hand sides in the solver's
// buffers and solves them.
func (sv *Solver) factorAndSolve(c *Chain) bool {
	m := len(sv.maybe)
	sv.index = grow(sv.index, c.NumStates())
	for i, s := range sv.maybe {
		sv.index[s] = int32(i)
	}
	sv.dense = grow(sv.dense, m*m)
	sv.rhs = grow(sv.rhs, 2*m)
	sv.sol = grow(sv.sol, 2*m)
	clear(sv.dense)
	for i, s := range sv.maybe {
		sv.dense[i*m+i] = 1
		b := 0.0
		cols, probs := c.Row(int(s))
		for k, t := range cols {
			switch sv.class[t] {
			case classMaybe:
				sv.dense[i*m+int(sv.index[t])] -= probs[k]
			case classProb1:
				b += probs[k]
			}
		}
		sv.rhs[2*i], sv.rhs[2*i+1] = b, 1
	}
	var lu mat.LU
	lu.Factorize(mat.NewDense(m, m, sv.dense))
	x := mat.NewDense(m, 2, sv.sol)
	// A Condition error still leaves a solution; the verification decides.
	if err := lu.SolveTo(x, false, mat.NewDense(m, 2, sv.rhs)); err != nil {
		if _, ill := err.(mat.Condition); !ill {
			return false
		}
	}
	for _, v := range sv.sol {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
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
// (I − Q)⁻¹ is non-negative.
func (sv *Solver) verifySteps(c *Chain, tau []float64) (float64, bool) {
	cmin, tmax := math.Inf(1), 0.0
	for _, s := range sv.maybe {
		ts := tau[s]
		if !(ts >= 0) {
			return 0, false
		}
		cols, probs := c.Row(int(s))
		qt := 0.0
		for k, t := range cols {
			if sv.class[t] == classMaybe {
				qt += probs[k] * tau[t]
			}
		}
		allow := float64(len(cols)+3) * roundoff * (ts + qt)
		cmin = min(cmin, ts-qt-allow)
		tmax = max(tmax, ts)
	}
	if !(cmin > 0) {
		return 0, false
	}
	// One more roundoff for the division itself.
	return tmax / cmin * (1 + roundoff), true
}
