// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var benchSizes = []int{1_000, 100_000, 1_000_000}
var benchAbsorption = []float64{0.05, 0.005}

// chainBytes is the memory a chain holds, per the lengths of its arrays.
func chainBytes(c *Chain) int {
	return 8*(len(c.rowStart)+len(c.predStart)) + 4*(len(c.col)+len(c.pred)) + 8*len(c.prob)
}

// solverBytes is the memory of the solver's buffers after an iterative solve.
func solverBytes(sv *Solver) int {
	k := sv.kry
	vectors := cap(k.x) + cap(k.b) + cap(k.r) + cap(k.rhat) + cap(k.p) + cap(k.v) + cap(k.s) + cap(k.t) + cap(k.dinv) + cap(sv.tau)
	w := sv.scc
	scc := 4*(cap(w.index)+cap(w.low)+cap(w.comp)+cap(w.order)+cap(w.stack)) + cap(w.onStack) + 8*cap(w.start) + 16*cap(w.calls)
	return cap(sv.class) + 4*cap(sv.stack) + 4*cap(sv.maybe) + 16*cap(sv.lu) + 8*vectors + scc
}

// BenchmarkReach: all-state probabilities with the guaranteed 1e-9 bound on
// random sparse chains of out-degree 8, by the default method (verified
// BiCGSTAB) at every size and by interval iteration up to 10^5 states (at
// 10^6 and 0.5% absorption it needs thousands of sweeps of a 100 MB matrix).
func BenchmarkReach(b *testing.B) {
	for _, n := range benchSizes {
		for _, a := range benchAbsorption {
			for _, it := range []Iteration{IterationAuto, IterationInterval} {
				if it == IterationInterval && n > 100_000 {
					continue
				}
				name := fmt.Sprintf("n=%d/absorb=%g/method=%s", n, a, methodName(it))
				b.Run(name, func(b *testing.B) { benchReach(b, n, a, it) })
			}
		}
	}
}

func methodName(it Iteration) string {
	if it == IterationAuto {
		return "krylov"
	}
	return string(it)
}

func benchReach(b *testing.B, n int, a float64, it Iteration) {
	if n >= 1_000_000 && testing.Short() {
		b.Skip("10^6 states skipped with -short")
	}
	c, target := randomSparseChain(rand.New(rand.NewPCG(42, uint64(n))), n, 8, a)
	sv := mustSolver(b, Options{Iteration: it})
	p := make([]float64, c.NumStates())
	b.ReportAllocs()
	var res Result
	for b.Loop() {
		var err error
		if res, err = sv.Reach(c, target, p); err != nil {
			b.Fatal(err)
		}
	}
	if res.Bound > DefaultTolerance || res.Method != map[Iteration]Method{IterationAuto: MethodKrylov, IterationInterval: MethodInterval}[it] {
		b.Fatalf("result %+v", res)
	}
	b.ReportMetric(float64(res.Sweeps), "iterations")
	b.ReportMetric(float64(chainBytes(c)+solverBytes(sv)+8*len(p))/float64(c.NumStates()), "B/state")
}

// BenchmarkSoundVsGaussSeidel: on the same chain, the default sound method
// (verified BiCGSTAB) and interval iteration, both to an absolute 1e-6,
// against plain Gauss-Seidel stopped, as PRISM does, on a relative change of
// 1e-6; it also reports how far each answer is from the truth.
func BenchmarkSoundVsGaussSeidel(b *testing.B) {
	for _, a := range benchAbsorption {
		b.Run(fmt.Sprintf("n=100000/absorb=%g", a), func(b *testing.B) {
			c, target := randomSparseChain(rand.New(rand.NewPCG(42, 100_000)), 100_000, 8, a)
			sound := mustSolver(b, Options{Tolerance: 1e-6})
			interval := mustSolver(b, Options{Tolerance: 1e-6, Iteration: IterationInterval})
			exact := make([]float64, c.NumStates())
			if _, err := mustSolver(b, Options{Tolerance: 1e-12}).Reach(c, target, exact); err != nil {
				b.Fatal(err)
			}
			p, q, u := make([]float64, c.NumStates()), make([]float64, c.NumStates()), make([]float64, c.NumStates())
			b.ReportAllocs()
			var soundTime, gsTime, intervalTime time.Duration
			var gsSweeps int
			for b.Loop() {
				start := time.Now()
				if _, err := sound.Reach(c, target, p); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				gsSweeps = plainGaussSeidel(sound, c, target, q, 1e-6)
				end := time.Now()
				if _, err := interval.Reach(c, target, u); err != nil {
					b.Fatal(err)
				}
				soundTime += mid.Sub(start)
				gsTime += end.Sub(mid)
				intervalTime += time.Since(end)
			}
			b.ReportMetric(float64(soundTime.Microseconds())/float64(b.N)/1000, "sound-ms")
			b.ReportMetric(float64(gsTime.Microseconds())/float64(b.N)/1000, "gs-ms")
			b.ReportMetric(float64(intervalTime.Microseconds())/float64(b.N)/1000, "interval-ms")
			b.ReportMetric(float64(soundTime)/float64(gsTime), "sound/gs")
			b.ReportMetric(float64(intervalTime)/float64(gsTime), "interval/gs")
			b.ReportMetric(float64(gsSweeps), "gs-sweeps")
			// In units of 1e-6, so that the small errors show in the output.
			b.ReportMetric(maxDiff(q, exact)/1e-6, "gs-err/1e-6")
			b.ReportMetric(maxDiff(p, exact)/1e-6, "sound-err/1e-6")
			b.ReportMetric(maxDiff(u, exact)/1e-6, "interval-err/1e-6")
		})
	}
}

// plainGaussSeidel is PRISM's default method, the baseline: after the same
// graph precomputation, Gauss-Seidel from 0 until the largest relative change
// of a sweep is below rel.
func plainGaussSeidel(sv *Solver, c *Chain, target []bool, x []float64, rel float64) int {
	sv.precompute(c, target)
	for s, cl := range sv.class {
		x[s] = 0
		if cl == classProb1 {
			x[s] = 1
		}
	}
	for sweep := 1; ; sweep++ {
		change := 0.0
		for _, s := range sv.maybe {
			cols, probs := c.Row(int(s))
			sum, self := 0.0, 0.0
			for i, t := range cols {
				if t == s {
					self = probs[i]
					continue
				}
				sum += probs[i] * x[t]
			}
			v := sum / (1 - self)
			if v > 0 {
				change = max(change, math.Abs(v-x[s])/v)
			}
			x[s] = v
		}
		if change < rel {
			return sweep
		}
	}
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// BenchmarkPersistentLine: the birth-death lines of docs/performance.md, certified to
// 1e-9 by the banded factorization (method=auto), beside the floor of any
// direct method, the same factorization and one float64 solve, uncertified.
// (The engine's fallback before, interval iteration, needs 1.4 million sweeps
// of the 1 000-state line even at 1e-6: over a minute.)
func BenchmarkPersistentLine(b *testing.B) {
	for _, tc := range []struct {
		n    int
		stay float64
	}{{1_000, 0.999}, {10_000, 0.99999}, {100_000, 0.99999}} {
		c, target := lineChain(tc.n, tc.stay, nil)
		b.Run(fmt.Sprintf("n=%d/stay=%g/method=auto", tc.n, tc.stay), func(b *testing.B) {
			res := reachLoop(b, c, target)
			if res.Method != MethodBanded || res.Bound > DefaultTolerance {
				b.Fatalf("%+v", res)
			}
			b.ReportMetric(res.Bound/1e-15, "bound/1e-15")
		})
		b.Run(fmt.Sprintf("n=%d/stay=%g/method=uncertified", tc.n, tc.stay), func(b *testing.B) {
			sv := mustSolver(b, Options{})
			v := make([]float64, tc.n)
			b.ReportAllocs()
			for b.Loop() {
				sv.precompute(c, target)
				f, ok := sv.factorBanded(c)
				if !ok {
					b.Fatal("no banded factorization")
				}
				for i, s := range sv.maybe {
					v[i] = 0
					if int(s) == tc.n {
						v[i] = move(tc.stay)
					}
				}
				f.solve(v)
			}
		})
	}
}

// reachLoop solves the chain with the default options once an iteration,
// allocations reported, and returns the last result.
func reachLoop(b *testing.B, c *Chain, target []bool) Result {
	sv := mustSolver(b, Options{})
	p := make([]float64, c.NumStates())
	b.ReportAllocs()
	var res Result
	for b.Loop() {
		var err error
		if res, err = sv.Reach(c, target, p); err != nil {
			b.Fatal(err)
		}
	}
	return res
}

// move is lineChain's probability of each step.
func move(stay float64) float64 { return math.Round((1-stay)/2*0x1p54) / 0x1p54 }

// BenchmarkGrid: the persistent grid walks of docs/performance.md
// (randchain.Grid), certified to 1e-9: by the band while it is narrow
// enough (100×100, 150×150), by sparse LU beyond (300×300; before it,
// interval iteration, which did not end in minutes).
func BenchmarkGrid(b *testing.B) {
	for _, tc := range []struct {
		w      int
		method Method
	}{{100, MethodBanded}, {150, MethodBanded}, {300, MethodSparse}} {
		c, target := gridChain(tc.w, nil)
		b.Run(fmt.Sprintf("w=%d", tc.w), func(b *testing.B) {
			res := reachLoop(b, c, target)
			if res.Method != tc.method || res.Bound > DefaultTolerance {
				b.Fatalf("%+v", res)
			}
		})
	}
}
