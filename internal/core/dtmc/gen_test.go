// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math/rand/v2"
	"testing"

	"github.com/agentguard/agentguard/internal/core/dtmc/randchain"
)

// randomSparseChain is the benchmark family (randchain.Rows, not lazy):
// states n and n+1 are the target and the sink.
func randomSparseChain(r *rand.Rand, n, deg int, absorb float64) (*Chain, []bool) {
	total := n + 2
	rowStart := make([]int, 1, total+1)
	col := make([]int32, 0, n*deg+2)
	prob := make([]float64, 0, n*deg+2)
	for row := range randchain.Rows(r, n, deg, absorb, false) {
		col = append(col, row.To...)
		prob = append(prob, row.Prob...)
		rowStart = append(rowStart, len(col))
	}
	c, err := NewChain(rowStart, col, prob)
	if err != nil {
		panic(err)
	}
	target := make([]bool, total)
	target[n] = true
	return c, target
}

func TestRandomSparseChainIsStochastic(t *testing.T) {
	c, target := randomSparseChain(rand.New(rand.NewPCG(1, 1)), 100, 8, 0.005)
	if c.NumStates() != 102 || !target[100] || target[101] {
		t.Fatalf("%d states", c.NumStates())
	}
}
