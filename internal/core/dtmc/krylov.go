// SPDX-License-Identifier: Apache-2.0

package dtmc

import "math"

// krylovWork holds the vectors of BiCGSTAB, one entry a state (only the
// maybe states' entries are used).
type krylovWork struct {
	x, b, r, rhat, p, v, s, t, dinv []float64
	watch                           *watch
	stopped                         bool // the last run was stopped by the time limit
}

// krylovMaxIter caps the iterations of one BiCGSTAB run; a system that needs
// more goes to interval iteration instead.
const krylovMaxIter = 2000

// solveKrylov solves the maybe states' system by BiCGSTAB with Jacobi
// preconditioning and returns a guaranteed error bound, computed exactly as
// for the direct solve: first τ̃ ≈ (I − Q)⁻¹·1 is computed and verified, giving
// τ ≤ τ̄, then x̃ is iterated until its residual r satisfies ‖r‖∞·τ̄ ≤ tol, and
// |x̃ − x| ≤ (I − Q)⁻¹|r| ≤ ‖r‖∞·τ̄. Krylov methods converge in a number of
// iterations that depends on the spread of the spectrum rather than on the
// absorption rate, so on slowly absorbing chains they take far fewer passes
// over the matrix than value iteration; the bound does not rely on them
// converging, and ok is false (the caller then iterates intervals) when they
// do not.
func (sv *Solver) solveKrylov(c *Chain, p []float64, tol float64) (bound float64, iters int, ok bool) {
	w := &sv.kry
	n := c.NumStates()
	// apply reads every successor's entry, so the entries outside the maybe
	// states must be zero: clear what an earlier solve left.
	for _, v := range []*[]float64{&w.x, &w.b, &w.r, &w.rhat, &w.p, &w.v, &w.s, &w.t, &w.dinv} {
		*v = grow(*v, n)
		clear(*v)
	}
	sv.tau = grow(sv.tau, n)
	w.watch, w.stopped = &sv.watch, false
	for _, s := range sv.maybe {
		w.dinv[s] = 1 / (1 - c.Prob(int(s), int(s)))
	}
	// τ: the right-hand side is 1. A rough solution suffices: with residual
	// entries below 1e-3 the verification gives c ≥ 1 − 1e-3, so τ̄ is within
	// 0.1% of max τ, and a tighter τ̃ would cost passes over the matrix.
	for _, s := range sv.maybe {
		w.b[s], w.x[s] = w.dinv[s], 0
	}
	it, ok := w.bicgstab(c, sv.maybe, 1e-3)
	iters += it
	if !ok {
		return 0, iters, false
	}
	for _, s := range sv.maybe {
		sv.tau[s] = w.x[s]
	}
	tauBound, ok := sv.verifySteps(c, sv.tau)
	if !ok {
		return 0, iters, false
	}
	// x: the right-hand side is the one-step probability into Prob1.
	for _, s := range sv.maybe {
		cols, probs := c.Row(int(s))
		b := 0.0
		for k, t := range cols {
			if sv.class[t] == classProb1 {
				b += probs[k]
			}
		}
		w.b[s], w.x[s] = w.dinv[s]*b, 0
	}
	// The preconditioned residual bounds the true one (1 − P(s|s) ≤ 1); a
	// margin covers the drift between the recursive and the true residual,
	// and a restart from the current iterate gets a second chance.
	// bound is that of the answer last written to p (0: none yet).
	goal := tol / tauBound / 4
	for range 3 {
		it, ok = w.bicgstab(c, sv.maybe, goal)
		iters += it
		if !ok && w.stopped {
			// The time limit: the iterate is as good an answer as any.
			for _, s := range sv.maybe {
				p[s] = min(max(w.x[s], 0), 1)
			}
			return sv.residualNorm(c, p) * tauBound * (1 + roundoff), iters, false
		}
		if !ok {
			return bound, iters, false
		}
		for _, s := range sv.maybe {
			p[s] = min(max(w.x[s], 0), 1)
		}
		if bound = sv.residualNorm(c, p) * tauBound * (1 + roundoff); bound <= tol {
			return bound, iters, true
		}
		goal /= 100
	}
	return bound, iters, false
}

// apply sets y = D⁻¹(I − Q)x on the maybe states, D the diagonal of I − Q.
// x must be zero outside the maybe states, which makes the product with the
// whole rows a product with Q.
func (w *krylovWork) apply(c *Chain, maybe []int32, x, y []float64) {
	for _, s := range maybe {
		lo, hi := c.rowStart[s], c.rowStart[s+1]
		cols, probs := c.col[lo:hi], c.prob[lo:hi]
		probs = probs[:len(cols)]
		sum := 0.0
		for k, t := range cols {
			if t != s {
				sum += probs[k] * x[t]
			}
		}
		y[s] = x[s] - w.dinv[s]*sum
	}
}

// bicgstab improves w.x towards the solution of D⁻¹(I − Q)x = w.b until the
// largest residual entry is at most goal. Every update runs over the maybe
// states only, so the vectors stay zero elsewhere, as apply needs.
func (w *krylovWork) bicgstab(c *Chain, maybe []int32, goal float64) (int, bool) {
	if w.restart(c, maybe) <= goal {
		return 0, true
	}
	rho, alpha, omega := 1.0, 1.0, 1.0
	restarts := 0
	for it := 1; it <= krylovMaxIter; it++ {
		rho1 := dot(maybe, w.rhat, w.r)
		if rho1 == 0 || omega == 0 {
			// A breakdown: the residual became orthogonal to the shadow
			// residual (common when the right-hand side has a small
			// support). Start again from the current iterate.
			if restarts++; restarts > 10 {
				return it, false
			}
			if w.restart(c, maybe) <= goal {
				return it, true
			}
			rho, alpha, omega = 1, 1, 1
			continue
		}
		beta := rho1 / rho * alpha / omega
		for _, s := range maybe {
			w.p[s] = w.r[s] + beta*(w.p[s]-omega*w.v[s])
		}
		w.apply(c, maybe, w.p, w.v)
		den := dot(maybe, w.rhat, w.v)
		if den == 0 {
			return it, false
		}
		alpha = rho1 / den
		for _, s := range maybe {
			w.s[s] = w.r[s] - alpha*w.v[s]
		}
		if normInf(maybe, w.s) <= goal {
			for _, s := range maybe {
				w.x[s] += alpha * w.p[s]
			}
			return it, true
		}
		w.apply(c, maybe, w.s, w.t)
		tt := dot(maybe, w.t, w.t)
		if tt == 0 {
			return it, false
		}
		omega = dot(maybe, w.t, w.s) / tt
		res := 0.0
		for _, s := range maybe {
			w.x[s] += alpha*w.p[s] + omega*w.s[s]
			w.r[s] = w.s[s] - omega*w.t[s]
			res = max(res, math.Abs(w.r[s]))
		}
		if math.IsNaN(res) {
			return it, false
		}
		if res <= goal {
			return it, true
		}
		if !w.watch.tick(math.NaN(), math.NaN(), res) {
			w.stopped = true
			return it, false
		}
		rho = rho1
	}
	return krylovMaxIter, false
}

// restart sets r = b − Ax, the shadow residual to r and the directions to 0,
// and returns ‖r‖∞.
func (w *krylovWork) restart(c *Chain, maybe []int32) float64 {
	w.apply(c, maybe, w.x, w.r)
	for _, s := range maybe {
		w.r[s] = w.b[s] - w.r[s]
		w.rhat[s], w.p[s], w.v[s] = w.r[s], 0, 0
	}
	return normInf(maybe, w.r)
}

func dot(idx []int32, a, b []float64) float64 {
	sum := 0.0
	for _, s := range idx {
		sum += a[s] * b[s]
	}
	return sum
}

func normInf(idx []int32, a []float64) float64 {
	m := 0.0
	for _, s := range idx {
		m = max(m, math.Abs(a[s]))
	}
	return m
}
