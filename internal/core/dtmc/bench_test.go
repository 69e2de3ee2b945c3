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
	return cap(sv.class) + 4*cap(sv.stack) + 4*cap(sv.maybe) + 16*cap(sv.lu)
}

// BenchmarkReach: all-state probabilities with the guaranteed 1e-9 bound on
// random sparse chains of out-degree 8.
func BenchmarkReach(b *testing.B) {
	for _, n := range benchSizes {
		for _, a := range benchAbsorption {
			b.Run(fmt.Sprintf("n=%d/absorb=%g", n, a), func(b *testing.B) {
				if n >= 1_000_000 && testing.Short() {
					b.Skip("10^6 states skipped with -short")
				}
				c, target := randomSparseChain(rand.New(rand.NewPCG(42, uint64(n))), n, 8, a)
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
				b.ReportMetric(float64(res.Sweeps), "sweeps")
				b.ReportMetric(float64(chainBytes(c)+solverBytes(sv)+8*len(p))/float64(c.NumStates()), "B/state")
			})
		}
	}
}

// BenchmarkSoundVsGaussSeidel: on the same chain, interval iteration to an
// absolute 1e-6 against plain Gauss-Seidel stopped, as PRISM does, on a
// relative change of 1e-6; it also reports how far that Gauss-Seidel answer
// is from the truth.
func BenchmarkSoundVsGaussSeidel(b *testing.B) {
	for _, a := range benchAbsorption {
		b.Run(fmt.Sprintf("n=100000/absorb=%g", a), func(b *testing.B) {
			c, target := randomSparseChain(rand.New(rand.NewPCG(42, 100_000)), 100_000, 8, a)
			sound := mustSolver(b, Options{Tolerance: 1e-6})
			exact := make([]float64, c.NumStates())
			if _, err := mustSolver(b, Options{Tolerance: 1e-12}).Reach(c, target, exact); err != nil {
				b.Fatal(err)
			}
			p, q := make([]float64, c.NumStates()), make([]float64, c.NumStates())
			b.ReportAllocs()
			var soundTime, gsTime time.Duration
			var gsSweeps int
			for b.Loop() {
				start := time.Now()
				if _, err := sound.Reach(c, target, p); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				gsSweeps = plainGaussSeidel(sound, c, target, q, 1e-6)
				soundTime += mid.Sub(start)
				gsTime += time.Since(mid)
			}
			b.ReportMetric(float64(soundTime.Microseconds())/float64(b.N)/1000, "sound-ms")
			b.ReportMetric(float64(gsTime.Microseconds())/float64(b.N)/1000, "gs-ms")
			b.ReportMetric(float64(soundTime)/float64(gsTime), "sound/gs")
			b.ReportMetric(float64(gsSweeps), "gs-sweeps")
			b.ReportMetric(maxDiff(q, exact), "gs-abs-err")
			b.ReportMetric(maxDiff(p, exact), "sound-abs-err")
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
