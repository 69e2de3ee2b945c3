// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math"

	"github.com/agentguard/agentguard/internal/core/dtmc/sparselu"
)

// Limits of the sparse factorization (see sparselu and docs/probguard.md).
const (
	// sparseMaxSeparator bounds the dissection's separators, and so the
	// dense fronts: a k×k grid's are about k, and 4096 lets a front of some
	// ten thousand rows through, a second of dense work.
	sparseMaxSeparator = 4096
	// sparseMaxBytes bounds the factors, the contribution stack and the
	// largest front together: 1 GiB holds a 1 000×1 000 grid's factors.
	sparseMaxBytes = 1 << 30
	// sparseMaxFlops bounds the factorization's work: about half a minute
	// at the 3–4 Gflop/s the dense kernels reach on one core.
	sparseMaxFlops = 1 << 37
	// sparseLowFill: factors with at most this many entries per entry of
	// the matrix are tried before BiCGSTAB. A grid's (fill O(log n) a
	// state) are 16–20 times the matrix; a random chain's are the dense
	// matrix, hundreds of times it, and BiCGSTAB solves those in a few
	// dozen iterations.
	sparseLowFill = 32
)

// sparseFactor is sparselu's factorization of the maybe states' system,
// whose rows are in strongly connected component order.
type sparseFactor struct {
	lu   *sparselu.LU
	row  []int32 // position among the maybe states → row of the matrix
	work []float64
}

func (f *sparseFactor) solve(v []float64) {
	for i, q := range f.row {
		f.work[q] = v[i]
	}
	f.lu.Solve(f.work)
	for i, q := range f.row {
		v[i] = f.work[q]
	}
}

// factorSparse factorizes the maybe states' system by sparse LU in nested
// dissection order, component by component, when it fits the limits (with
// lowFill, only when the factors stay within sparseLowFill times the
// matrix); false when it does not fit, a pivot is not positive, or the time
// limit stopped it.
func (sv *Solver) factorSparse(c *Chain, lowFill bool) (factorization, bool) {
	if !sv.sparseProbe(c) {
		return nil, false
	}
	a, blocks, row := sv.sparseSystem(c)
	lim := sparselu.Limits{MaxSeparator: sparseMaxSeparator, MaxEntries: sparseMaxBytes / 8}
	if lowFill {
		lim.MaxEntries = min(lim.MaxEntries, sparseLowFill*len(a.Col))
	}
	an, err := sparselu.Analyze(a, blocks, lim)
	if err != nil || an.Bytes > sparseMaxBytes || an.Flops > sparseMaxFlops {
		return nil, false
	}
	sv.watch.enter("sparse LU")
	lu, err := an.Factor(a, func(done float64) bool { return sv.watch.tick(done, math.NaN(), math.NaN()) })
	if err != nil {
		return nil, false
	}
	return &sparseFactor{lu: lu, row: row, work: make([]float64, len(row))}, true
}

// sparseProbe is a breadth-first search over the maybe states' undirected
// graph that stops as soon as a level is wider than twice the largest
// separator: a random sparse chain's levels grow geometrically, so it is
// refused after a few thousand states, before any matrix is built.
func (sv *Solver) sparseProbe(c *Chain) bool {
	sv.index = grow(sv.index, c.NumStates())
	for i, s := range sv.maybe {
		sv.index[s] = int32(i)
	}
	_, ok := sv.searchFrom(c, 0, make([]bool, len(sv.maybe)), make([]int32, 0, 64), 2*sparseMaxSeparator, nil)
	return ok
}

// sparseSystem builds I − Q on the maybe states with the strongly connected
// components in order, successors first, so that it is block lower
// triangular; it returns the matrix, the components' first rows, and each
// maybe state's row by position.
func (sv *Solver) sparseSystem(c *Chain) (*sparselu.Matrix, []int, []int32) {
	order, comps := sv.orderBySCC(c)
	blocks := append([]int{0}, sv.scc.start[:comps]...)
	m := len(order)
	rowOf := make([]int32, c.NumStates())
	for q, s := range order {
		rowOf[s] = int32(q)
	}
	a := &sparselu.Matrix{RowStart: make([]int, 1, m+1)}
	for _, s := range order {
		cols, probs := c.Row(int(s))
		self := 0.0
		for k, t := range cols {
			switch {
			case t == s:
				self = probs[k]
			case sv.class[t] == classMaybe && probs[k] != 0:
				a.Col = append(a.Col, rowOf[t])
				a.Val = append(a.Val, -probs[k])
			}
		}
		// 1 − self is exact for self ≥ ½, which is where it matters.
		a.Col = append(a.Col, rowOf[s])
		a.Val = append(a.Val, 1-self)
		a.RowStart = append(a.RowStart, len(a.Col))
	}
	row := make([]int32, m)
	for i, s := range sv.maybe {
		row[i] = rowOf[s]
	}
	return a, blocks, row
}
