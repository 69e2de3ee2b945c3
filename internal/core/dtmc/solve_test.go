// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// stove is the chain of spec V1: s0 = f0k0, s1 = f0k1, s2 = f1k0, s3 = f1k1
// (unsafe), s4 = end.
func stove() ratChain {
	return ratRows(
		[]int{0, 151, 184, 1, 31, 184, 2, 1, 184, 4, 1, 184},
		[]int{0, 1, 34, 1, 1, 34, 3, 1, 34, 4, 31, 34},
		[]int{0, 1, 4, 2, 1, 4, 3, 1, 4, 4, 1, 4},
		[]int{1, 1, 4, 2, 1, 4, 3, 1, 4, 4, 1, 4},
		[]int{4, 1, 1},
	)
}

var stoveUnsafe = []bool{false, false, false, true, false}

func rat(a, b int64) *big.Rat { return big.NewRat(a, b) }

func mustSolver(t testing.TB, opt Options) *Solver {
	sv, err := NewSolver(opt)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

func TestV1Reachability(t *testing.T) {
	c := stove().chain(t)
	want := []*big.Rat{rat(14, 349), rat(11, 349), rat(121, 349), rat(1, 1), rat(0, 1)}
	for _, tc := range []struct {
		name   string
		opt    Options
		method Method
	}{
		{"direct", Options{}, MethodDirect},
		{"interval", Options{DirectMax: -1, Tolerance: 1e-13, Iteration: IterationInterval}, MethodInterval},
		{"krylov", Options{DirectMax: -1, Tolerance: 1e-13}, MethodKrylov},
	} {
		p := make([]float64, 5)
		res, err := mustSolver(t, tc.opt).Reach(c, stoveUnsafe, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Method != tc.method || res.Maybe != 3 || res.Prob0 != 1 || res.Prob1 != 1 {
			t.Errorf("%s: result %+v", tc.name, res)
		}
		if res.Bound > mustSolver(t, tc.opt).Options().Tolerance {
			t.Errorf("%s: bound %g above the tolerance", tc.name, res.Bound)
		}
		checkClose(t, tc.name, p, want, 1e-12)
		if safe := 1 - p[0]; safe < 0.9598853868-1e-10 || safe > 0.9598853868+1e-10 {
			t.Errorf("%s: P_safe(s0) = %.12f, want 335/349 ≈ 0.9598853868", tc.name, safe)
		}
	}
}

func TestV1Bounded(t *testing.T) {
	c := stove().chain(t)
	sv := mustSolver(t, Options{})
	p := make([]float64, 5)
	for _, tc := range []struct {
		k     int
		state int
		want  float64
	}{
		{2, 0, 79.0 / 12512},
		{10, 0, 0.0325200768},
		{1, 1, 1.0 / 34},
		{2, 1, 35.0 / 1156},
		{2, 2, 5.0 / 16},
		{0, 3, 1},
		{0, 0, 0},
	} {
		if _, err := sv.BoundedReach(c, stoveUnsafe, tc.k, p); err != nil {
			t.Fatal(err)
		}
		tol := 1e-15
		if tc.k == 10 {
			tol = 1e-10 // the spec gives ten digits
		}
		if d := p[tc.state] - tc.want; d > tol || d < -tol {
			t.Errorf("P_s%d(F≤%d unsafe) = %.15g, want %.15g", tc.state, tc.k, p[tc.state], tc.want)
		}
	}
}

func TestRandomChainsAgainstRationalOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	direct := mustSolver(t, Options{})
	interval := mustSolver(t, Options{DirectMax: -1, Tolerance: 1e-13, Iteration: IterationInterval})
	// The verified bound of BiCGSTAB includes the rounding of the residual
	// (~1e-15 times the expected steps), so it is asked for a little less.
	krylov := mustSolver(t, Options{DirectMax: -1, Tolerance: 5e-13})
	fallbacks := 0
	for trial := range 300 {
		n := 2 + r.IntN(49)
		rc := randomRatChain(r, n)
		c := rc.chain(t)
		target := randomTarget(r, n)
		want := rc.exactReach(target)
		for _, sv := range []*Solver{direct, interval, krylov} {
			p := make([]float64, n)
			res, err := sv.Reach(c, target, p)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			checkClose(t, string(res.Method), p, want, 1e-12)
			if sv == krylov && res.Maybe > 0 && res.Method != MethodKrylov {
				fallbacks++
			}
		}
		k := r.IntN(12)
		p := make([]float64, n)
		if _, err := direct.BoundedReach(c, target, k, p); err != nil {
			t.Fatal(err)
		}
		checkClose(t, "bounded", p, rc.exactBounded(target, k), 1e-12)
		if t.Failed() {
			t.Fatalf("trial %d: n=%d", trial, n)
		}
	}
	if fallbacks > 3 {
		t.Errorf("BiCGSTAB fell back to interval iteration in %d of 300 chains", fallbacks)
	}
}

// A large chain where the iterative methods are forced agrees with the
// direct solve within the bounds, for both iterative methods.
func TestIterativeMethodsMatchDirectSolve(t *testing.T) {
	for _, absorb := range []float64{0.05, 0.005} {
		c, target := randomSparseChain(rand.New(rand.NewPCG(7, 7)), 600, 8, absorb)
		direct := make([]float64, c.NumStates())
		dres, err := mustSolver(t, Options{DirectMax: 1000}).Reach(c, target, direct)
		if err != nil || dres.Method != MethodDirect {
			t.Fatalf("direct: %+v %v", dres, err)
		}
		for _, tc := range []struct {
			opt    Options
			method Method
		}{
			{Options{DirectMax: -1, Iteration: IterationInterval}, MethodInterval},
			{Options{DirectMax: -1}, MethodKrylov},
		} {
			iter := make([]float64, c.NumStates())
			ires, err := mustSolver(t, tc.opt).Reach(c, target, iter)
			if err != nil || ires.Method != tc.method || ires.Bound > 1e-9 || ires.Sweeps < 5 {
				t.Fatalf("%s: %+v %v", tc.method, ires, err)
			}
			for s := range direct {
				if d := direct[s] - iter[s]; d > ires.Bound+dres.Bound || d < -(ires.Bound+dres.Bound) {
					t.Errorf("absorb %g, state %d: direct %.17g, %s %.17g, bounds %g + %g", absorb, s, direct[s], tc.method, iter[s], dres.Bound, ires.Bound)
				}
			}
		}
	}
}

func TestSolverRejectsBadInput(t *testing.T) {
	if _, err := NewSolver(Options{Tolerance: 1e-20}); err == nil {
		t.Error("tolerance 1e-20 accepted")
	}
	if _, err := NewSolver(Options{Iteration: "jacobi"}); err == nil {
		t.Error("iteration jacobi accepted")
	}
	c := stove().chain(t)
	sv := mustSolver(t, Options{})
	if _, err := sv.Reach(c, []bool{true}, make([]float64, 5)); err == nil {
		t.Error("short target accepted")
	}
	if _, err := sv.BoundedReach(c, stoveUnsafe, -1, make([]float64, 5)); err == nil {
		t.Error("negative bound accepted")
	}
}

func TestExpectedStepsOnTheStove(t *testing.T) {
	c := stove().chain(t)
	for _, opt := range []Options{{}, {DirectMax: -1}, {DirectMax: -1, Iteration: IterationInterval}} {
		tau := make([]float64, 5)
		bound, err := mustSolver(t, opt).ExpectedSteps(c, stoveUnsafe, tau)
		if err != nil {
			t.Fatal(err)
		}
		want := 2390.0 / 349
		if tau[0] < want-1e-9 || tau[0] > want+1e-9 || bound < want-1e-9 || bound > want*(1+1e-9) {
			t.Errorf("options %+v: τ = %v, bound %.12g, want τ(s0) = τ_max = 2390/349 = %.12g", opt, tau, bound, want)
		}
	}
}

// Asked for 1e-14, BiCGSTAB's verified bound cannot get there (it includes
// the rounding of the residual times the expected steps), so the solver
// falls back to interval iteration, whose bound can.
func TestKrylovFallsBackToIntervalIteration(t *testing.T) {
	c, target := randomSparseChain(rand.New(rand.NewPCG(9, 9)), 300, 8, 0.05)
	p := make([]float64, c.NumStates())
	res, err := mustSolver(t, Options{DirectMax: -1, Tolerance: 1e-14}).Reach(c, target, p)
	if err != nil || res.Method != MethodInterval || res.Bound > 1e-14 {
		t.Fatalf("%+v %v", res, err)
	}
	direct := make([]float64, c.NumStates())
	if _, err := mustSolver(t, Options{DirectMax: 1000}).Reach(c, target, direct); err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(p, direct); d > 1e-12 {
		t.Errorf("interval and direct differ by %g", d)
	}
}
