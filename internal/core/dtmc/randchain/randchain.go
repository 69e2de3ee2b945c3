// SPDX-License-Identifier: Apache-2.0

// Package randchain draws the random sparse chains that the dtmc benchmarks
// measure and that gentra writes as PRISM files, so that both are the same
// chains for the same seed.
package randchain

import (
	"iter"
	"math/rand/v2"
	"slices"
)

// Row is one state's transitions, sorted by successor, each successor once.
type Row struct {
	To   []int32
	Prob []float64
}

// Rows yields the n+2 rows of a chain of n transient states, each with
// out-degree deg: one edge to an absorbing state (the target n or the sink
// n+1, at random) with probability absorb, and deg−1 edges to random
// transient states sharing the rest with random weights (repeats merged).
// lazy halves every row and adds a self-loop of 1/2. The two absorbing rows
// come last.
func Rows(r *rand.Rand, n, deg int, absorb float64, lazy bool) iter.Seq[Row] {
	return func(yield func(Row) bool) {
		w := make([]float64, deg-1)
		succ := make([]int32, deg)
		for s := range n {
			sum := 0.0
			for i := range w {
				w[i] = 0.1 + r.Float64()
				sum += w[i]
			}
			for i := range deg - 1 {
				succ[i] = int32(r.IntN(n))
			}
			succ[deg-1] = int32(n + r.IntN(2))
			probs := map[int32]float64{succ[deg-1]: absorb}
			for i := range deg - 1 {
				probs[succ[i]] += (1 - absorb) * w[i] / sum
			}
			if lazy {
				for t := range probs {
					probs[t] /= 2
				}
				probs[int32(s)] += 0.5
			}
			if !yield(sorted(probs)) {
				return
			}
		}
		for s := n; s < n+2; s++ {
			if !yield(Row{[]int32{int32(s)}, []float64{1}}) {
				return
			}
		}
	}
}

func sorted(probs map[int32]float64) Row {
	var r Row
	for t := range probs {
		r.To = append(r.To, t)
	}
	slices.Sort(r.To)
	for _, t := range r.To {
		r.Prob = append(r.Prob, probs[t])
	}
	return r
}

// GridMove is the probability of each of a grid walk's four moves, 2⁻¹²:
// a persistent walk, whose self-loop 1 − 4·2⁻¹² is exact in binary.
const GridMove = 0x1p-12

// Grid yields the rows of the persistent walk on a w×w grid: state 0 is a
// sink (the column left of the grid), states 1..w² the cells, row by row
// (cell (x, y), both from 1, is state (y−1)·w + x), and state w²+1 the
// target (the column right of it). From a cell the walk moves left, right,
// up or down with GridMove each, stepping off the left or right edge into
// the sink or the target; a move off the top or bottom edge stays put,
// which leaves the horizontal coordinate a lazy gambler's walk: P(F target)
// from column x is exactly x/(w+1), every row summing to exactly 1. The
// band in index order is w wide on each side, so w⁴ multiply-adds for a
// banded factorization.
func Grid(w int) iter.Seq[Row] {
	return func(yield func(Row) bool) {
		if !yield(Row{To: []int32{0}, Prob: []float64{1}}) {
			return
		}
		for y := 1; y <= w; y++ {
			for x := 1; x <= w; x++ {
				if !yield(gridRow(w, x, y)) {
					return
				}
			}
		}
		target := int32(w*w + 1)
		yield(Row{To: []int32{target}, Prob: []float64{1}})
	}
}

func gridRow(w, x, y int) Row {
	cell := func(x, y int) int32 {
		switch {
		case x == 0:
			return 0
		case x == w+1:
			return int32(w*w + 1)
		}
		return int32((y-1)*w + x)
	}
	self := cell(x, y)
	probs := map[int32]float64{self: 1 - 4*GridMove}
	for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
		nx, ny := x+d[0], y+d[1]
		if ny < 1 || ny > w {
			probs[self] += GridMove
			continue
		}
		probs[cell(nx, ny)] += GridMove
	}
	return sorted(probs)
}
