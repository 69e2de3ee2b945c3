// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// lineChain is the birth-death line of gentra: states 0 (a sink) to n+1 (the
// target), each inner state staying put with probability stay and moving to
// either neighbour with the rest, halved. The move probability is a multiple
// of 2⁻⁵⁴, so stay = 1 − 2·move is exact, every row sums to exactly 1, and
// P(F target) from state i is exactly i/(n+1). perm, if not nil, renumbers
// the states (perm[old] = new).
func lineChain(n int, stay float64, perm []int) (*Chain, []bool) {
	move := move(stay)
	self := 1 - 2*move
	at := func(s int) int {
		if perm == nil {
			return s
		}
		return perm[s]
	}
	rows := make([][]Transition, n+2)
	rows[at(0)] = []Transition{{at(0), 1}}
	rows[at(n+1)] = []Transition{{at(n + 1), 1}}
	for s := 1; s <= n; s++ {
		rows[at(s)] = []Transition{{at(s - 1), move}, {at(s), self}, {at(s + 1), move}}
	}
	c, err := FromRows(rows)
	if err != nil {
		panic(err)
	}
	target := make([]bool, n+2)
	target[at(n+1)] = true
	return c, target
}

// The generator's rows sum to exactly 1 in real arithmetic, which is what
// makes i/(n+1) the exact answer of the float64 chain the solver sees (a row
// off by one ulp would move the answer of a 10⁵-state line by up to 10⁻²).
func TestLineChainIsExactlyStochastic(t *testing.T) {
	for _, stay := range []float64{0.5, 0.999, 0.9999, 0.99999, 0.999999} {
		c, _ := lineChain(3, stay, nil)
		_, probs := c.Row(2)
		sum := new(big.Float).SetPrec(0)
		for _, p := range probs {
			sum.Add(sum, new(big.Float).SetFloat64(p))
		}
		if sum.Cmp(big.NewFloat(1)) != 0 || math.Abs(probs[1]-stay) > 1e-15 {
			t.Errorf("stay %g: row %v sums to %s", stay, probs, sum.Text('g', 40))
		}
	}
}

// Persistent lines are solved to the default 1e-9 by a factorization with a
// certified bound, and the answer is within that bound of i/(n+1) at every
// state. The sizes and self-loops are those of docs/performance.md (the 10⁵ line at
// 0.999 and 0.99999); each takes well under a second.
func TestPersistentLinesAgainstExactAnswers(t *testing.T) {
	for _, tc := range []struct {
		n      int
		stay   float64
		method Method
		within time.Duration
	}{
		{200, 0.99999, MethodDirect, time.Second},
		{1_000, 0.999, MethodBanded, time.Second},
		{10_000, 0.999, MethodBanded, 5 * time.Second},
		{10_000, 0.99999, MethodBanded, 5 * time.Second},
		{100_000, 0.999, MethodBanded, 30 * time.Second},
		{100_000, 0.99999, MethodBanded, 30 * time.Second},
	} {
		t.Run(fmt.Sprintf("n=%d/stay=%g", tc.n, tc.stay), func(t *testing.T) {
			c, target := lineChain(tc.n, tc.stay, nil)
			p := make([]float64, c.NumStates())
			start := time.Now()
			res, err := mustSolver(t, Options{}).Reach(c, target, p)
			took := time.Since(start)
			if err != nil || res.Method != tc.method || res.Bound > DefaultTolerance || res.Maybe != tc.n {
				t.Fatalf("%+v %v", res, err)
			}
			checkLine(t, p, res.Bound, nil)
			// A generous limit: the machine may be loaded.
			if took > tc.within {
				t.Errorf("took %v, want under %v", took, tc.within)
			}
		})
	}
}

// checkLine checks |p(i) − i/(n+1)| ≤ bound at every state, beyond the
// rounding of i/(n+1) itself.
func checkLine(t *testing.T, p []float64, bound float64, perm []int) {
	t.Helper()
	n := len(p) - 2
	worst := 0.0
	for i := range n + 2 {
		s := i
		if perm != nil {
			s = perm[i]
		}
		want := float64(i) / float64(n+1)
		d := math.Abs(p[s] - want)
		worst = max(worst, d)
		if d > bound+2e-16 {
			t.Fatalf("state %d: %.17g, want %.17g within the bound %g", i, p[s], want, bound)
		}
	}
	t.Logf("bound %.3g, largest error %.3g", bound, worst)
}

// A line numbered at random has no narrow band in index order: at 700
// states the band is the whole matrix, still cheap enough; at 2 000 it is
// not, and the reverse Cuthill-McKee order finds the line again.
func TestShuffledLines(t *testing.T) {
	for _, n := range []int{700, 2_000} {
		perm := rand.New(rand.NewPCG(3, 3)).Perm(n + 2)
		c, target := lineChain(n, 0.999, perm)
		p := make([]float64, c.NumStates())
		res, err := mustSolver(t, Options{}).Reach(c, target, p)
		if err != nil || res.Method != MethodBanded || res.Bound > DefaultTolerance {
			t.Fatalf("n=%d: %+v %v", n, res, err)
		}
		checkLine(t, p, res.Bound, perm)
	}
}

// A random chain made persistent (a self-loop of 0.9999 added to every
// transient row, the rest scaled down) has the same absorption probabilities
// as the chain itself, up to the rounding of the scaled rows (about 10⁻¹¹
// here). Every size is certified without interval iteration: by dense LU
// up to DirectMax, then by whichever of the band and BiCGSTAB fits.
func TestPersistentRandomChains(t *testing.T) {
	for _, n := range []int{300, 990, 3_000} {
		c, target := randomSparseChain(rand.New(rand.NewPCG(4, uint64(n))), n, 8, 0.05)
		rows := make([][]Transition, c.NumStates())
		for s := range rows {
			cols, probs := c.Row(s)
			if s >= n {
				rows[s] = []Transition{{s, 1}}
				continue
			}
			rows[s] = []Transition{{s, 0.9999}}
			for k, t := range cols {
				if int(t) == s {
					rows[s][0].Prob += probs[k] * 0.0001
					continue
				}
				rows[s] = append(rows[s], Transition{int(t), probs[k] * 0.0001})
			}
		}
		lazy, err := FromRows(rows)
		if err != nil {
			t.Fatal(err)
		}
		p, q := make([]float64, c.NumStates()), make([]float64, c.NumStates())
		if _, err := mustSolver(t, Options{}).Reach(c, target, p); err != nil {
			t.Fatal(err)
		}
		res, err := mustSolver(t, Options{}).Reach(lazy, target, q)
		if err != nil || res.Method == MethodInterval || res.Bound > DefaultTolerance {
			t.Fatalf("n=%d: %+v %v", n, res, err)
		}
		if d := maxDiff(p, q); d > 2e-9 {
			t.Errorf("n=%d: the persistent chain's answer is %g from the chain's", n, d)
		}
		t.Logf("n=%d: %s, bound %.3g", n, res.Method, res.Bound)
	}
}

// The banded factorization against the rational oracle, on random chains
// whose states only step to nearby ones, with heavy self-loops.
func TestBandedAgainstRationalOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	banded := mustSolver(t, Options{DirectMax: 1, Tolerance: 1e-13})
	for trial := range 100 {
		n := 3 + r.IntN(40)
		rc := ratChain{rows: make([][]ratEntry, n)}
		for s := range n {
			if s == 0 || s == n-1 || r.IntN(15) == 0 {
				rc.rows[s] = []ratEntry{{s, big.NewRat(1, 1)}}
				continue
			}
			weights := map[int]int64{s: 1000 + r.Int64N(100_000)}
			for range 1 + r.IntN(3) {
				weights[min(max(s-3+r.IntN(7), 0), n-1)] += 1 + r.Int64N(9)
			}
			total := int64(0)
			for _, w := range weights {
				total += w
			}
			for t, w := range weights {
				rc.rows[s] = append(rc.rows[s], ratEntry{t, big.NewRat(w, total)})
			}
		}
		c := rc.chain(t)
		target := make([]bool, n)
		target[n-1] = true
		p := make([]float64, n)
		res, err := banded.Reach(c, target, p)
		if err != nil || (res.Maybe > 1 && res.Method != MethodBanded) || res.Bound > 1e-13 {
			t.Fatalf("trial %d: %+v %v", trial, res, err)
		}
		// The oracle's chain is the rational one; the solver sees its float64
		// image, which moves the answer by about the expected steps (10⁵ and
		// more here) times 1e-16.
		checkClose(t, "banded", p, rc.exactReach(target), 1e-10)
	}
}

// A line written in decimals (0.99999 and 0.000005, whose float64 values sum
// to 1 + 1.9e-18) is not the line: its answer drifts from i/(n+1). The
// certified bound holds for the chain as written, checked against a 300-bit
// solve of the same float64 probabilities (the Thomas algorithm on the
// tridiagonal system).
func TestDecimalLineAgainstHighPrecision(t *testing.T) {
	const n, prec = 3_000, 300
	// Variables, not constants: 1 − stay must be the float64 difference.
	stay, mv := 0.99999, 0.000005
	rows := make([][]Transition, n+2)
	rows[0], rows[n+1] = []Transition{{0, 1}}, []Transition{{n + 1, 1}}
	for s := 1; s <= n; s++ {
		rows[s] = []Transition{{s - 1, mv}, {s, stay}, {s + 1, mv}}
	}
	c, err := FromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	target := make([]bool, n+2)
	target[n+1] = true
	p := make([]float64, n+2)
	res, err := mustSolver(t, Options{}).Reach(c, target, p)
	if err != nil || res.Method != MethodBanded || res.Bound > 1e-15 {
		t.Fatalf("%+v %v", res, err)
	}
	bf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	q, d := bf(mv), bf(1-stay) // 1 − stay is exact (Sterbenz)
	// Forward: x_i = c_i·x_{i+1} + e_i.
	cs, es := make([]*big.Float, n+1), make([]*big.Float, n+1)
	cPrev, ePrev := bf(0), bf(0)
	for i := 1; i <= n; i++ {
		den := bf(0).Mul(q, cPrev)
		den.Sub(d, den)
		cs[i] = bf(0).Quo(q, den)
		es[i] = bf(0).Quo(bf(0).Mul(q, ePrev), den)
		cPrev, ePrev = cs[i], es[i]
	}
	next, drift := bf(1), 0.0
	for i := n; i >= 1; i-- {
		x := bf(0).Mul(cs[i], next)
		x.Add(x, es[i])
		want, _ := x.Float64()
		if d := math.Abs(p[i] - want); d > res.Bound+1e-300 {
			t.Fatalf("state %d: %.17g, the 300-bit solve %.17g: %g apart, above the bound %g", i, p[i], want, d, res.Bound)
		}
		drift = max(drift, math.Abs(want-float64(i)/(n+1)))
		next = x
	}
	if drift < 1e-9 {
		t.Errorf("the decimal line drifts by only %g from i/(n+1): the test lost its point", drift)
	}
	t.Logf("bound %.3g; the decimal line is up to %.3g from i/(n+1)", res.Bound, drift)
}
