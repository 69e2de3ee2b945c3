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
