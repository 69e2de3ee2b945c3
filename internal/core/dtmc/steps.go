// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"errors"
	"fmt"
)

// ExpectedSteps writes into tau, for every state, the expected number of
// steps before the chain reaches the target or a state that cannot reach it
// (0 on those states): τ = (I − Q)⁻¹·1 on the maybe states. It returns a
// guaranteed upper bound on max τ, the quantity the PAC conditioning bound
// B̂ needs (spec §3).
func (sv *Solver) ExpectedSteps(c *Chain, target []bool, tau []float64) (float64, error) {
	if err := checkVectors(c, target, tau); err != nil {
		return 0, err
	}
	sv.precompute(c, target)
	clear(tau)
	m := len(sv.maybe)
	if m == 0 {
		return 0, nil
	}
	var f factorization
	ok := false
	if m <= sv.opt.DirectMax {
		f, ok = sv.factorDense(c)
	} else if sv.opt.DirectMax >= 0 {
		if f, ok = sv.factorBanded(c); !ok && m > denseFallbackMax {
			f, ok = sv.factorSparse(c, true)
		}
	}
	if ok {
		sv.sol = grow(sv.sol, m)
		for i := range sv.sol {
			sv.sol[i] = 1
		}
		f.solve(sv.sol)
		for i, s := range sv.maybe {
			tau[s] = sv.sol[i]
		}
	} else if err := sv.iterateSteps(c, tau); err != nil {
		return 0, err
	}
	bound, ok := sv.verifySteps(c, tau)
	if !ok {
		return 0, errors.New("expected steps: the computed solution does not verify (the chain is too ill-conditioned)")
	}
	return bound, nil
}

// iterateSteps runs Gauss-Seidel on τ = 1 + Qτ from 0 until the largest
// relative change is below 1e-13; the result is then verified by the caller.
func (sv *Solver) iterateSteps(c *Chain, tau []float64) error {
	for sweep := 0; sweep < sv.opt.MaxSweeps; sweep++ {
		change := 0.0
		for _, s := range sv.maybe {
			cols, probs := c.Row(int(s))
			sum, self := 1.0, 0.0
			for k, t := range cols {
				switch {
				case t == s:
					self = probs[k]
				case sv.class[t] == classMaybe:
					sum += probs[k] * tau[t]
				}
			}
			v := sum / (1 - self)
			change = max(change, (v-tau[s])/v)
			tau[s] = v
		}
		if change < 1e-13 {
			return nil
		}
	}
	return fmt.Errorf("expected steps: no convergence in %d sweeps", sv.opt.MaxSweeps)
}
