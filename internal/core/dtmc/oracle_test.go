// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// ratChain is a chain with exact rational probabilities; chain() is its
// float64 image, the one the solver sees.
type ratChain struct {
	rows [][]ratEntry
}

type ratEntry struct {
	to int
	p  *big.Rat
}

func (rc ratChain) chain(t testing.TB) *Chain {
	rows := make([][]Transition, len(rc.rows))
	for s, r := range rc.rows {
		for _, e := range r {
			f, _ := e.p.Float64()
			rows[s] = append(rows[s], Transition{To: e.to, Prob: f})
		}
	}
	c, err := FromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ratRows builds a ratChain from rows written as (to, num, den) triples.
func ratRows(rows ...[]int) ratChain {
	var rc ratChain
	for _, r := range rows {
		var row []ratEntry
		for i := 0; i < len(r); i += 3 {
			row = append(row, ratEntry{r[i], big.NewRat(int64(r[i+1]), int64(r[i+2]))})
		}
		rc.rows = append(rc.rows, row)
	}
	return rc
}

// randomRatChain draws a chain of n states: about a tenth absorbing, the
// others with 1 to 4 successors of random integer weights; with few edges
// some states are unreachable and some cannot reach anything but themselves.
func randomRatChain(r *rand.Rand, n int) ratChain {
	rc := ratChain{rows: make([][]ratEntry, n)}
	for s := range n {
		if r.IntN(10) == 0 {
			rc.rows[s] = []ratEntry{{s, big.NewRat(1, 1)}}
			continue
		}
		weights := map[int]int64{}
		for range 1 + r.IntN(4) {
			weights[r.IntN(n)] += 1 + r.Int64N(9)
		}
		total := int64(0)
		for _, w := range weights {
			total += w
		}
		for t, w := range weights {
			rc.rows[s] = append(rc.rows[s], ratEntry{t, big.NewRat(w, total)})
		}
	}
	return rc
}

func randomTarget(r *rand.Rand, n int) []bool {
	target := make([]bool, n)
	for s := range target {
		target[s] = r.IntN(8) == 0
	}
	return target
}

// exactReach is the oracle: P(F target) by Gaussian elimination over the
// rationals on the states that can reach the target (the others are 0).
func (rc ratChain) exactReach(target []bool) []*big.Rat {
	n := len(rc.rows)
	canReach := append([]bool(nil), target...)
	for changed := true; changed; {
		changed = false
		for s, row := range rc.rows {
			for _, e := range row {
				if !canReach[s] && canReach[e.to] {
					canReach[s], changed = true, true
				}
			}
		}
	}
	var unknowns []int
	pos := make([]int, n)
	for s := range n {
		pos[s] = -1
		if canReach[s] && !target[s] {
			pos[s] = len(unknowns)
			unknowns = append(unknowns, s)
		}
	}
	m := len(unknowns)
	a := make([][]*big.Rat, m) // augmented [I − Q | b]
	for i, s := range unknowns {
		a[i] = make([]*big.Rat, m+1)
		for j := range a[i] {
			a[i][j] = new(big.Rat)
		}
		a[i][i].SetInt64(1)
		for _, e := range rc.rows[s] {
			switch {
			case target[e.to]:
				a[i][m].Add(a[i][m], e.p)
			case pos[e.to] >= 0:
				a[i][pos[e.to]].Sub(a[i][pos[e.to]], e.p)
			}
		}
	}
	x := gaussJordan(a)
	out := make([]*big.Rat, n)
	for s := range n {
		switch {
		case target[s]:
			out[s] = big.NewRat(1, 1)
		case pos[s] >= 0:
			out[s] = x[pos[s]]
		default:
			out[s] = new(big.Rat)
		}
	}
	return out
}

// gaussJordan solves an augmented m×(m+1) system that is known to be
// nonsingular.
func gaussJordan(a [][]*big.Rat) []*big.Rat {
	m := len(a)
	tmp := new(big.Rat)
	for col := range m {
		piv := col
		for a[piv][col].Sign() == 0 {
			piv++
		}
		a[col], a[piv] = a[piv], a[col]
		inv := new(big.Rat).Inv(a[col][col])
		for j := col; j <= m; j++ {
			a[col][j].Mul(a[col][j], inv)
		}
		for i := range m {
			if i == col || a[i][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Set(a[i][col])
			for j := col; j <= m; j++ {
				a[i][j].Sub(a[i][j], tmp.Mul(f, a[col][j]))
			}
		}
	}
	x := make([]*big.Rat, m)
	for i := range m {
		x[i] = a[i][m]
	}
	return x
}

// exactBounded is the oracle for F≤k: k steps of rational iteration.
func (rc ratChain) exactBounded(target []bool, k int) []*big.Rat {
	n := len(rc.rows)
	cur := make([]*big.Rat, n)
	for s := range n {
		cur[s] = new(big.Rat)
		if target[s] {
			cur[s].SetInt64(1)
		}
	}
	for range k {
		next := make([]*big.Rat, n)
		for s, row := range rc.rows {
			next[s] = new(big.Rat)
			if target[s] {
				next[s].SetInt64(1)
				continue
			}
			for _, e := range row {
				next[s].Add(next[s], new(big.Rat).Mul(e.p, cur[e.to]))
			}
		}
		cur = next
	}
	return cur
}

func checkClose(t *testing.T, what string, got []float64, want []*big.Rat, tol float64) {
	t.Helper()
	for s := range got {
		w, _ := want[s].Float64()
		if d := got[s] - w; d > tol || d < -tol {
			t.Errorf("%s: state %d = %.17g, want %s = %.17g (off by %.3g, tolerance %g)", what, s, got[s], want[s].RatString(), w, d, tol)
		}
	}
}
