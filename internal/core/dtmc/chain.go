// SPDX-License-Identifier: Apache-2.0

// Package dtmc is agentguard's discrete-time Markov chain engine (the DTMC
// part of ProbGuard): chains learned from traces (states as
// predicate bit vectors plus the absorbing end state), the always_safe,
// bounded and response properties solved for every state at once with a
// guaranteed absolute error, PAC reports, and the JSON model and PRISM file
// formats.
//
// The numeric chain (Chain, a CSR matrix) is kept apart from the learned model
// (Model) and from the algorithms (Solver, which owns its work buffers), in
// the manner of gonum. Reachability first finds the states with probability
// 0 and 1 by graph search; the others (maybe states) are solved by dense LU
// when there are at most Options.DirectMax of them, by banded LU when their
// system is narrow in index order (a birth-death line is tridiagonal), by
// sparse LU in nested-dissection order when the band is too wide but the
// factors stay small (a grid; see sparse.go and the sparselu package), else
// by BiCGSTAB, and by dense LU (up to denseFallbackMax states) or sparse LU
// whatever its fill when BiCGSTAB cannot certify its answer. Every answer carries an a-posteriori
// bound ‖r‖∞·τ̄, the residual times a verified upper bound on the expected
// steps to leave the maybe states; the factorizations refine their answer in
// double-double precision and bound its residual rigorously, which certifies
// persistent chains (τ̄ of 10¹⁴) to 1e-15 (see refine.go). When no bound
// meets the tolerance, interval iteration (Gauss-Seidel from below and
// above, components in topological order) iterates until the bounds meet.
//
// The PAC conditioning bound is B̂ = ½ · max_s k_s · max_s τ(s) (spec §3),
// τ the expected steps to absorption in unsafe ∪ Prob0, from the same
// verified computation.
package dtmc

import (
	"fmt"
	"math"
	"sort"
)

// RowTolerance is how far a row's sum may be from 1.
const RowTolerance = 1e-9

// Chain is a DTMC over states 0..N-1 in compressed sparse row form: the
// successors of s are col[rowStart[s]:rowStart[s+1]], in increasing order,
// with probabilities prob[...]. It also holds the predecessor structure, which
// the graph precomputations walk backwards. A Chain is immutable.
type Chain struct {
	rowStart []int
	col      []int32
	prob     []float64

	predStart []int
	pred      []int32
}

// Transition is one entry of a row.
type Transition struct {
	To   int
	Prob float64
}

// NewChain builds a chain from CSR arrays, which it keeps (the caller must
// not change them). Each row must be sorted by column without repeats, hold
// finite probabilities in [0, 1] and sum to 1 within RowTolerance.
func NewChain(rowStart []int, col []int32, prob []float64) (*Chain, error) {
	if len(rowStart) == 0 || rowStart[0] != 0 || rowStart[len(rowStart)-1] != len(col) || len(col) != len(prob) {
		return nil, fmt.Errorf("malformed CSR arrays: %d row starts, %d columns, %d probabilities", len(rowStart), len(col), len(prob))
	}
	n := len(rowStart) - 1
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("%d states: at most %d", n, math.MaxInt32)
	}
	for s := range n {
		if err := checkRow(s, n, col[rowStart[s]:rowStart[s+1]], prob[rowStart[s]:rowStart[s+1]]); err != nil {
			return nil, err
		}
	}
	c := &Chain{rowStart: rowStart, col: col, prob: prob}
	c.buildPredecessors()
	return c, nil
}

// FromRows builds a chain from one slice of transitions a state; rows need
// not be sorted.
func FromRows(rows [][]Transition) (*Chain, error) {
	rowStart := make([]int, len(rows)+1)
	for s, r := range rows {
		rowStart[s+1] = rowStart[s] + len(r)
	}
	col := make([]int32, 0, rowStart[len(rows)])
	prob := make([]float64, 0, rowStart[len(rows)])
	for s, r := range rows {
		sorted := append([]Transition(nil), r...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].To < sorted[j].To })
		for _, tr := range sorted {
			if tr.To < 0 || tr.To >= len(rows) {
				return nil, fmt.Errorf("state %d: successor %d out of range [0, %d)", s, tr.To, len(rows))
			}
			col = append(col, int32(tr.To))
			prob = append(prob, tr.Prob)
		}
	}
	return NewChain(rowStart, col, prob)
}

func checkRow(s, n int, col []int32, prob []float64) error {
	if len(col) == 0 {
		return fmt.Errorf("state %d: no outgoing transitions", s)
	}
	sum := 0.0
	for i, t := range col {
		p := prob[i]
		switch {
		case t < 0 || int(t) >= n:
			return fmt.Errorf("state %d: successor %d out of range [0, %d)", s, t, n)
		case i > 0 && t <= col[i-1]:
			return fmt.Errorf("state %d: successor %d repeated or out of order", s, t)
		case math.IsNaN(p) || p < 0 || p > 1:
			return fmt.Errorf("state %d: probability %v to %d: want a number in [0, 1]", s, p, t)
		}
		sum += p
	}
	if math.Abs(sum-1) > RowTolerance {
		return fmt.Errorf("state %d: probabilities sum to %.17g, want 1 (within %g)", s, sum, RowTolerance)
	}
	return nil
}

// buildPredecessors fills the transposed structure by a counting sort; only
// positive-probability edges count, since the graph searches follow them.
func (c *Chain) buildPredecessors() {
	n := c.NumStates()
	c.predStart = make([]int, n+1)
	for i, t := range c.col {
		if c.prob[i] > 0 {
			c.predStart[t+1]++
		}
	}
	for s := range n {
		c.predStart[s+1] += c.predStart[s]
	}
	c.pred = make([]int32, c.predStart[n])
	fill := append([]int(nil), c.predStart[:n]...)
	for s := range n {
		for i := c.rowStart[s]; i < c.rowStart[s+1]; i++ {
			if c.prob[i] > 0 {
				t := c.col[i]
				c.pred[fill[t]] = int32(s)
				fill[t]++
			}
		}
	}
}

// NumStates is the number of states.
func (c *Chain) NumStates() int { return len(c.rowStart) - 1 }

// NumTransitions is the number of stored entries.
func (c *Chain) NumTransitions() int { return len(c.col) }

// Row returns the successors of s and their probabilities; the slices are the
// chain's own and must not be changed.
func (c *Chain) Row(s int) ([]int32, []float64) {
	lo, hi := c.rowStart[s], c.rowStart[s+1]
	return c.col[lo:hi], c.prob[lo:hi]
}

// Predecessors returns the states with a positive-probability edge to s.
func (c *Chain) Predecessors(s int) []int32 { return c.pred[c.predStart[s]:c.predStart[s+1]] }

// Prob is P(t | s).
func (c *Chain) Prob(s, t int) float64 {
	cols, probs := c.Row(s)
	i := sort.Search(len(cols), func(i int) bool { return int(cols[i]) >= t })
	if i < len(cols) && int(cols[i]) == t {
		return probs[i]
	}
	return 0
}

// Absorbing reports whether s goes to itself with probability 1.
func (c *Chain) Absorbing(s int) bool { return c.Prob(s, s) == 1 }

// Irreducible reports whether every state reaches every other: then
// P(F u) = 1 from every state for every non-empty u, which makes a safety
// model useless (spec V4). It is one forward and one backward search.
func (c *Chain) Irreducible() bool {
	n := c.NumStates()
	// An absorbing state reaches nothing else: the common case, answered
	// without a search.
	for s := range n {
		if n > 1 && c.Absorbing(s) {
			return false
		}
	}
	seen := make([]bool, n)
	stack := make([]int32, 0, 64)
	for _, forward := range []bool{true, false} {
		clear(seen)
		seen[0] = true
		reached := 1
		stack = append(stack[:0], 0)
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			next, probs := c.Predecessors(int(s)), []float64(nil)
			if forward {
				next, probs = c.Row(int(s))
			}
			for i, t := range next {
				if !seen[t] && (probs == nil || probs[i] > 0) {
					seen[t] = true
					reached++
					stack = append(stack, t)
				}
			}
		}
		if reached != n {
			return false
		}
	}
	return true
}

// Warnings lists what is suspicious about a chain as a safety model.
func (c *Chain) Warnings() []string {
	if c.NumStates() > 0 && c.Irreducible() {
		return []string{"the chain is irreducible (no absorbing part): P(F u) = 1 from every state for every non-empty u, so P_safe is 0 everywhere; a chain learned from traces needs the absorbing end state"}
	}
	return nil
}
