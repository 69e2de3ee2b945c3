// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Certified direct solves.
//
// A direct solve in float64 finds the answer of a persistent chain (self-loops
// of 0.999 and more, a birth-death line) accurately, but the a-posteriori
// bound ‖r‖∞·τ̄ cannot certify it: τ̄, the expected steps to leave the maybe
// states, is 10⁸–10¹⁴ there, and the residual r = b − (I − Q)x̃ of any
// float64 vector x̃ is of order 10⁻¹⁶, so the bound is 10⁻⁸ to 10⁻². Nor can
// any other residual-based certificate do better (x̃ − ε·w is a
// sub-solution only if ε(I − Q)w ≥ |r|, which makes ε·max w ≥ ‖r‖∞·τ in
// general). What we change instead is the residual: x̃ is kept as a
// double-double (x_hi + x_lo, about 32 digits), improved by iterative
// refinement (the residual computed in double-double, the correction solved
// with the same float64 factorization), and the residual of the final x̃ is
// bounded rigorously, error-free transformations and all, at about 10⁻³¹
// times the size of the terms. The bound |x − x̃| ≤ (I − Q)⁻¹|r| ≤ ‖r‖∞·τ̄
// is the same theorem as before, τ̄ verified the same way (see verifySteps):
// nothing is assumed of the factorization, which only has to be good enough
// for the refinement to converge (it must shrink the error, which a
// factorization with condition number below about 10¹⁴ does). The printed
// probability is x_hi + x_lo rounded, one more rounding in the bound.

// factorization solves (I − Q)y = v on the maybe states, in place, v and y
// indexed by position among the maybe states.
type factorization interface {
	solve(v []float64)
}

// refineMaxSteps caps the refinement steps; each gains the digits the
// factorization is accurate to, and a step that does not halve the residual
// ends it.
const refineMaxSteps = 30

// solveRefined solves the maybe states' system with f and certifies it as
// described above; p receives the probabilities of the maybe states. ok is
// false when the steps bound does not verify or the bound misses tol.
func (sv *Solver) solveRefined(c *Chain, f factorization, p []float64, tol float64) (bound float64, ok bool) {
	m := len(sv.maybe)
	n := c.NumStates()
	sv.index = grow(sv.index, n)
	for i, s := range sv.maybe {
		sv.index[s] = int32(i)
	}
	// τ̃, verified: τ ≤ τ̄.
	v := grow(sv.sol, m)
	sv.sol = v
	for i := range v {
		v[i] = 1
	}
	f.solve(v)
	sv.tau = grow(sv.tau, n)
	for i, s := range sv.maybe {
		sv.tau[s] = v[i]
	}
	tauBound, ok := sv.verifySteps(c, sv.tau)
	if !ok {
		return 0, false
	}
	// x̃ = x_hi + x_lo, by state; zero outside the maybe states is never read.
	sv.xhi, sv.xlo = grow(sv.xhi, n), grow(sv.xlo, n)
	xhi, xlo := sv.xhi, sv.xlo
	for i, s := range sv.maybe {
		cols, probs := c.Row(int(s))
		b := 0.0
		for k, t := range cols {
			if sv.class[t] == classProb1 {
				b += probs[k]
			}
		}
		v[i] = b
	}
	f.solve(v)
	for i, s := range sv.maybe {
		xhi[s], xlo[s] = v[i], 0
	}
	// Each pass measures the current x̃; it stops there when the bound is
	// far below tol or no longer halves, else it refines x̃.
	prev := math.Inf(1)
	for step := 0; ; step++ {
		rmax, xmax := 0.0, 0.0
		for i, s := range sv.maybe {
			r, allow := sv.residualDD(c, int(s))
			v[i] = r
			rmax = max(rmax, math.Abs(r)+allow)
			xmax = max(xmax, math.Abs(xhi[s]))
		}
		if math.IsNaN(rmax) {
			return 0, false
		}
		// The last term is the rounding of x_hi + x_lo to the printed float.
		bound = rmax*tauBound*(1+2*roundoff) + roundoff*xmax
		if bound <= tol*1e-3 || !(bound < prev/2) || step == refineMaxSteps || !sv.watch.tickBound(bound) {
			break
		}
		prev = bound
		f.solve(v)
		for i, s := range sv.maybe {
			hi, e := twoSum(xhi[s], v[i])
			xhi[s], xlo[s] = fastTwoSum(hi, xlo[s]+e)
		}
	}
	for _, s := range sv.maybe {
		p[s] = min(max(xhi[s]+xlo[s], 0), 1)
	}
	return bound, bound <= tol
}

// residualDD returns r = b − (I − Q)x̃ at state s for x̃ = x_hi + x_lo,
// evaluated in double-double, and a rigorous bound on the error of r.
//
// Each product P·x_hi is split exactly into p + e (FMA); the large parts are
// summed by TwoSum, whose errors are exact too; what is not exact is the
// float sum "lo" of the small parts (the e's, P·x_lo, −x_lo) and the
// rounding of P·x_lo and of the final hi + lo. So the error is at most
// (k+2)·u·Σ|small parts| + u·|r| + an underflow allowance, u the unit
// roundoff; roundoff (2u) and doubling the count make it generous.
func (sv *Solver) residualDD(c *Chain, s int) (r, allow float64) {
	cols, probs := c.Row(s)
	xhi, xlo := sv.xhi, sv.xlo
	hi, lo, mag := 0.0, 0.0, 0.0
	for k, t := range cols {
		q := probs[k]
		var big, e float64
		switch sv.class[t] {
		case classMaybe:
			big = q * xhi[t]
			eh := math.FMA(q, xhi[t], -big)
			pl := q * xlo[t]
			lo += eh + pl
			mag += math.Abs(eh) + math.Abs(pl)
		case classProb1:
			big = q
		default:
			continue
		}
		hi, e = twoSum(hi, big)
		lo += e
		mag += math.Abs(e)
	}
	hi, e := twoSum(hi, -xhi[s])
	lo += e - xlo[s]
	mag += math.Abs(e) + math.Abs(xlo[s])
	r = hi + lo
	terms := float64(3*len(cols) + 4)
	allow = 2*terms*roundoff*mag + roundoff*math.Abs(r) + float64(len(cols)+2)*0x1p-1000
	return r, allow
}

// twoSum returns a + b rounded and its exact error (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// fastTwoSum is twoSum for |a| ≥ |b| (or a = 0).
func fastTwoSum(a, b float64) (s, e float64) {
	if math.Abs(a) < math.Abs(b) {
		a, b = b, a
	}
	s = a + b
	return s, b - (s - a)
}

// denseLU is gonum's LU with partial pivoting of the dense I − Q.
type denseLU struct {
	lu  mat.LU
	vec *mat.VecDense
}

// factorDense builds I − Q densely in the solver's buffer and factorizes it.
// A singular or ill-conditioned factorization is not refused here (the
// determinant of a persistent chain's I − Q underflows to 0 at a few hundred
// states): a NaN or a bound that does not verify refuses it later.
func (sv *Solver) factorDense(c *Chain) (factorization, bool) {
	m := len(sv.maybe)
	sv.index = grow(sv.index, c.NumStates())
	for i, s := range sv.maybe {
		sv.index[s] = int32(i)
	}
	sv.dense = grow(sv.dense, m*m)
	clear(sv.dense)
	for i, s := range sv.maybe {
		sv.dense[i*m+i] = 1
		cols, probs := c.Row(int(s))
		for k, t := range cols {
			if sv.class[t] == classMaybe {
				sv.dense[i*m+int(sv.index[t])] -= probs[k]
			}
		}
	}
	f := &denseLU{}
	f.lu.Factorize(mat.NewDense(m, m, sv.dense))
	f.vec = mat.NewVecDense(m, nil)
	return f, true
}

func (f *denseLU) solve(v []float64) {
	b := mat.NewVecDense(len(v), v)
	// A Condition error still leaves a solution: the certificate decides.
	_ = f.lu.SolveVecTo(f.vec, false, b)
	copy(v, f.vec.RawVector().Data)
}
