// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentguard/agentguard/internal/core/dtmc/randchain"
)

// gridChain is randchain.Grid: the persistent walk on a w×w grid, whose
// answer from a cell in column x is exactly x/(w+1). perm, if not nil,
// renumbers the states (perm[old] = new).
func gridChain(w int, perm []int) (*Chain, []bool) {
	at := func(s int) int {
		if perm == nil {
			return s
		}
		return perm[s]
	}
	rows := make([][]Transition, w*w+2)
	s := 0
	for r := range randchain.Grid(w) {
		for i, t := range r.To {
			rows[at(s)] = append(rows[at(s)], Transition{at(int(t)), r.Prob[i]})
		}
		s++
	}
	c, err := FromRows(rows)
	if err != nil {
		panic(err)
	}
	target := make([]bool, w*w+2)
	target[at(w*w+1)] = true
	return c, target
}

// checkGrid checks |p − x/(w+1)| ≤ bound at every state, beyond the
// rounding of x/(w+1) itself, and returns the largest error.
func checkGrid(t *testing.T, w int, p []float64, bound float64, perm []int) float64 {
	t.Helper()
	worst := 0.0
	for i := range w*w + 2 {
		s := i
		if perm != nil {
			s = perm[i]
		}
		want := 1.0
		switch {
		case i == 0:
			want = 0
		case i <= w*w:
			want = float64((i-1)%w+1) / float64(w+1)
		}
		d := math.Abs(p[s] - want)
		worst = max(worst, d)
		if d > bound+2e-16 {
			t.Fatalf("state %d: %.17g, want %.17g within the bound %g", i, p[s], want, bound)
		}
	}
	return worst
}

// A grid too wide for the band (200⁴ multiply-adds) is certified to the
// default 1e-9 by the sparse factorization, within its bound of the exact
// answer everywhere; before it, the solve fell into interval iteration and
// did not end in 90 s.
func TestGridAgainstExactAnswers(t *testing.T) {
	const w = 200
	c, target := gridChain(w, nil)
	p := make([]float64, c.NumStates())
	start := time.Now()
	res, err := mustSolver(t, Options{}).Reach(c, target, p)
	took := time.Since(start)
	if err != nil || res.Method != MethodSparse || res.Bound > DefaultTolerance || res.Maybe != w*w {
		t.Fatalf("%+v %v", res, err)
	}
	worst := checkGrid(t, w, p, res.Bound, nil)
	t.Logf("%v: bound %.3g, largest error %.3g", took, res.Bound, worst)
	if took > 20*time.Second {
		t.Errorf("took %v, want well under 20 s", took)
	}
}

// The factorization's own orderings do not depend on the numbering: a
// shuffled grid, factorized sparse directly (the automatic choice takes the
// band for one this small), gives the same certified answers.
func TestShuffledGridSparse(t *testing.T) {
	const w = 40
	perm := rand.New(rand.NewPCG(5, 5)).Perm(w*w + 2)
	c, target := gridChain(w, perm)
	sv := mustSolver(t, Options{})
	sv.precompute(c, target)
	f, ok := sv.factorSparse(c, false)
	if !ok {
		t.Fatal("no sparse factorization")
	}
	p := make([]float64, c.NumStates())
	p[perm[w*w+1]] = 1
	bound, ok := sv.solveRefined(c, f, p, 1e-12)
	if !ok {
		t.Fatalf("bound %g", bound)
	}
	checkGrid(t, w, p, bound, perm)
}

// A random sparse chain (an expander: no small separator) is refused by the
// probe before any matrix is built, and solved by BiCGSTAB as before.
func TestRandomChainNotSparse(t *testing.T) {
	c, target := randomSparseChain(rand.New(rand.NewPCG(42, 50_000)), 50_000, 8, 0.05)
	sv := mustSolver(t, Options{})
	sv.precompute(c, target)
	if sv.sparseProbe(c) {
		t.Error("the probe accepted a random chain")
	}
	p := make([]float64, c.NumStates())
	if res, err := sv.Reach(c, target, p); err != nil || res.Method != MethodKrylov {
		t.Fatalf("%+v %v", res, err)
	}
}

// dyadicPersistentChain draws a chain of n states whose probabilities are
// multiples of 2⁻²⁰ summing to exactly 1 a row, so that the float64 chain
// the solver sees is the rational chain of the oracle: about a tenth of the
// states absorbing (with local, the first and the last), the others with
// half of their rows on a self-loop of 0.875 to 1 − 2⁻¹⁸, the rest to 1–4
// successors, anywhere or, with local, both neighbours and others within
// 3, which makes one long persistent component.
func dyadicPersistentChain(r *rand.Rand, n int, local bool) ratChain {
	const one = 1 << 20
	rc := ratChain{rows: make([][]ratEntry, n)}
	for s := range n {
		if (!local && r.IntN(10) == 0) || (local && (s == 0 || s == n-1)) {
			rc.rows[s] = []ratEntry{{s, big.NewRat(1, 1)}}
			continue
		}
		weights := map[int]int64{}
		rest := int64(one)
		if r.IntN(2) == 0 {
			leave := int64(4) << r.IntN(16)
			weights[s], rest = one-leave, leave
		}
		k := 1 + r.IntN(4)
		if local {
			k++
		}
		for i := range k {
			t := r.IntN(n)
			switch {
			case local && i < 2:
				t = s - 1 + 2*i // both neighbours: one component
			case local:
				t = min(max(s-3+r.IntN(7), 0), n-1)
			}
			w := rest / int64(k-i)
			if i < k-1 && w > 1 {
				w = 1 + r.Int64N(w)
			}
			weights[t] += w
			rest -= w
		}
		for t, w := range weights {
			rc.rows[s] = append(rc.rows[s], ratEntry{t, big.NewRat(w, one)})
		}
	}
	return rc
}

// checkSparseAgainstOracle solves a dyadic persistent chain by sparse LU and
// refinement and checks, in rationals, that every answer is within the
// certified bound of the exact one. It returns the number of maybe states
// and of their strongly connected components, and whether the refinement
// certified 1e-13: a system too ill-conditioned for it (its expected steps
// do not verify in double precision) is left to the other methods, and
// nothing is checked of it.
func checkSparseAgainstOracle(t *testing.T, seed uint64, n int, local bool) (maybe, comps int, certified bool) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	rc := dyadicPersistentChain(r, n, local)
	target := randomTarget(r, n)
	if local {
		clear(target)
		target[n-1] = true
	}
	c := rc.chain(t)
	sv := mustSolver(t, Options{Tolerance: 1e-13})
	res := sv.precompute(c, target)
	p := make([]float64, n)
	for s, cl := range sv.class {
		if cl == classProb1 {
			p[s] = 1
		}
	}
	bound := 0.0
	if res.Maybe > 0 {
		f, ok := sv.factorSparse(c, false)
		if !ok {
			t.Fatalf("seed %d: no sparse factorization of %d maybe states", seed, res.Maybe)
		}
		_, comps = sv.orderBySCC(c)
		if bound, ok = sv.solveRefined(c, f, p, 1e-13); !ok {
			return res.Maybe, comps, false
		}
	}
	exact := rc.exactReach(target)
	diff := new(big.Rat)
	for s := range n {
		diff.SetFloat64(p[s])
		diff.Sub(diff, exact[s])
		d, _ := diff.Abs(diff).Float64()
		if d > bound {
			t.Fatalf("seed %d: state %d = %.17g, exact %s: off by %.3g, above the bound %.3g", seed, s, p[s], exact[s].FloatString(20), d, bound)
		}
	}
	return res.Maybe, comps, true
}

// The property: on random persistent chains, strongly connected components
// and all, every answer of the sparse factorization is within its certified
// bound of the exact rational answer. The local chains have components of
// over 48 states (the dissection's leaves), so separators are found too.
func TestSparseAgainstRationalOracle(t *testing.T) {
	multi := 0
	for seed := range uint64(120) {
		n := 3 + int(seed%40)
		_, comps, certified := checkSparseAgainstOracle(t, seed, n, false)
		if !certified {
			t.Errorf("seed %d: the refinement did not certify 1e-13", seed)
		}
		if comps > 1 {
			multi++
		}
	}
	for seed := range uint64(3) {
		n := 60 + int(seed)*20
		if maybe, comps, certified := checkSparseAgainstOracle(t, 1000+seed, n, true); maybe != n-2 || comps != 1 || !certified {
			t.Errorf("local chain of %d states: %d maybe states in %d components (certified: %v), want one of %d, certified", n, maybe, comps, certified, n-2)
		}
	}
	// The draw must keep making block triangular systems.
	if multi < 40 {
		t.Errorf("only %d of 120 chains have more than one component", multi)
	}
}

func FuzzSparseAgainstOracle(f *testing.F) {
	f.Add(uint64(1), uint8(10), false)
	f.Add(uint64(2), uint8(40), true)
	f.Add(uint64(3), uint8(70), true)
	// Up to 42 states: the exact rational answers grow fast with the size,
	// and the local chains of the property test cover the larger ones.
	f.Fuzz(func(t *testing.T, seed uint64, size uint8, local bool) {
		checkSparseAgainstOracle(t, seed, 3+int(size)%40, local)
	})
}

// A solve stopped by the time limit says so, and the bound it returns still
// holds: checked against the grid's exact answers for each way of stopping
// (in BiCGSTAB, in interval iteration).
func TestTimeLimitBoundHolds(t *testing.T) {
	const w = 120
	c, target := gridChain(w, nil)
	for _, opt := range []Options{
		{DirectMax: -1, TimeLimit: 200 * time.Millisecond},
		{DirectMax: -1, Iteration: IterationInterval, TimeLimit: 200 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("iteration=%q", opt.Iteration), func(t *testing.T) {
			p := make([]float64, c.NumStates())
			start := time.Now()
			res, err := mustSolver(t, opt).Reach(c, target, p)
			if !errors.Is(err, ErrTimeLimit) || !(res.Bound > DefaultTolerance && res.Bound <= 0.5) {
				t.Fatalf("%+v %v", res, err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("stopped after %v, the limit is %v", took, opt.TimeLimit)
			}
			worst := checkGrid(t, w, p, res.Bound, nil)
			t.Logf("%v: %s, bound %.3g, largest error %.3g", err, res.Method, res.Bound, worst)
		})
	}
}

// A long solve reports its phase and progress; the reports' fractions of a
// factorization increase.
func TestProgressReports(t *testing.T) {
	defer func(first, every time.Duration) { progressFirst, progressEvery = first, every }(progressFirst, progressEvery)
	progressFirst, progressEvery = 0, 0
	c, target := gridChain(200, nil)
	var reports []Progress
	sv := mustSolver(t, Options{Progress: func(pr Progress) { reports = append(reports, pr) }})
	p := make([]float64, c.NumStates())
	if res, err := sv.Reach(c, target, p); err != nil || res.Method != MethodSparse {
		t.Fatalf("%+v %v", res, err)
	}
	phases := map[string]int{}
	last := 0.0
	for _, pr := range reports {
		phases[pr.Phase]++
		if pr.Phase == "sparse LU" {
			if !(pr.Done > last && pr.Done <= 1) {
				t.Fatalf("fraction %g after %g", pr.Done, last)
			}
			last = pr.Done
		}
		if pr.Phase == "refinement" && !(pr.Bound > 0) {
			t.Errorf("refinement report without a bound: %+v", pr)
		}
	}
	if phases["sparse LU"] < 10 || phases["refinement"] == 0 {
		t.Errorf("reports by phase: %v", phases)
	}
	// Interval iteration reports its certified half width, which shrinks,
	// and an estimate of the time left from the rate it shrinks at.
	reports = reports[:0]
	c, target = gridChain(60, nil)
	sv = mustSolver(t, Options{DirectMax: -1, Iteration: IterationInterval, TimeLimit: 300 * time.Millisecond,
		Progress: func(pr Progress) { reports = append(reports, pr) }})
	if _, err := sv.Reach(c, target, make([]float64, c.NumStates())); !errors.Is(err, ErrTimeLimit) {
		t.Fatal(err)
	}
	estimates := 0
	for i, pr := range reports {
		if pr.Phase != "interval iteration" || (i > 0 && !(pr.Bound <= reports[i-1].Bound)) {
			t.Fatalf("report %d: %+v after %+v", i, pr, reports[max(i-1, 0)])
		}
		if pr.Left > 0 {
			estimates++
		}
	}
	if len(reports) < 10 || estimates < len(reports)/2 {
		t.Errorf("%d reports, %d with an estimate", len(reports), estimates)
	}
}
