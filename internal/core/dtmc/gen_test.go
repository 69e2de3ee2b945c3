package dtmc

import (
	"math/rand/v2"
	"testing"
)

// randomSparseChain draws the benchmark family: n transient states, each with
// out-degree deg: one edge to an absorbing state (the target or a sink, at
// random) with probability absorb, and deg−1 edges to random transient
// states sharing the rest with random weights. States n and n+1 are the
// target and the sink.
func randomSparseChain(r *rand.Rand, n, deg int, absorb float64) (*Chain, []bool) {
	total := n + 2
	rowStart := make([]int, total+1)
	col := make([]int32, 0, n*deg+2)
	prob := make([]float64, 0, n*deg+2)
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
		// Merge repeated successors: keep rows sorted and unique.
		probs := map[int32]float64{succ[deg-1]: absorb}
		for i := range deg - 1 {
			probs[succ[i]] += (1 - absorb) * w[i] / sum
		}
		for _, t := range sortedKeys(probs) {
			col = append(col, t)
			prob = append(prob, probs[t])
		}
		rowStart[s+1] = len(col)
	}
	for s := n; s < total; s++ {
		col = append(col, int32(s))
		prob = append(prob, 1)
		rowStart[s+1] = len(col)
	}
	c, err := NewChain(rowStart, col, prob)
	if err != nil {
		panic(err)
	}
	target := make([]bool, total)
	target[n] = true
	return c, target
}

func sortedKeys(m map[int32]float64) []int32 {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func TestRandomSparseChainIsStochastic(t *testing.T) {
	c, target := randomSparseChain(rand.New(rand.NewPCG(1, 1)), 100, 8, 0.005)
	if c.NumStates() != 102 || !target[100] || target[101] {
		t.Fatalf("%d states", c.NumStates())
	}
}
