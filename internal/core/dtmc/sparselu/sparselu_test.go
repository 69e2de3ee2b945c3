// SPDX-License-Identifier: Apache-2.0

package sparselu

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

var testLimits = Limits{MaxSeparator: 4096, MaxEntries: 1 << 26}

// builder collects the entries of a matrix row by row.
type builder struct {
	rows [][]entry
}

type entry struct {
	j int32
	v float64
}

func (b *builder) add(i, j int, v float64) { b.rows[i] = append(b.rows[i], entry{int32(j), v}) }

func (b *builder) matrix() *Matrix {
	a := &Matrix{RowStart: []int{0}}
	for _, r := range b.rows {
		for _, e := range r {
			a.Col = append(a.Col, e.j)
			a.Val = append(a.Val, e.v)
		}
		a.RowStart = append(a.RowStart, len(a.Col))
	}
	return a
}

// randomMMatrix is I − Q for a random substochastic Q (row sums below 1,
// some rows well below, some heavy self-loops): block lower triangular with
// random block sizes, sparse within and between blocks.
func randomMMatrix(r *rand.Rand, n int) (*Matrix, []int) {
	blocks := []int{0}
	for blocks[len(blocks)-1] < n {
		blocks = append(blocks, min(n, blocks[len(blocks)-1]+1+r.IntN(max(1, n/3))))
	}
	b := &builder{rows: make([][]entry, n)}
	for k := range len(blocks) - 1 {
		lo, hi := blocks[k], blocks[k+1]
		for i := lo; i < hi; i++ {
			w := make(map[int]float64)
			// A ring through the block keeps it strongly connected.
			if hi-lo > 1 {
				w[lo+(i-lo+1)%(hi-lo)] += 1
			}
			for range r.IntN(4) {
				w[lo+r.IntN(hi-lo)] += r.Float64()
			}
			if lo > 0 && r.IntN(2) == 0 {
				w[r.IntN(lo)] += r.Float64()
			}
			self := 0.0
			if r.IntN(3) == 0 {
				self = 1 - math.Pow(10, -1-3*r.Float64())
			}
			sum := 0.0
			for _, v := range w {
				sum += v
			}
			leave := 0.05 + 0.5*r.Float64()
			b.add(i, i, 1-self)
			for j, v := range w {
				if j != i {
					b.add(i, j, -(1-self)*(1-leave)*v/sum)
				}
			}
		}
	}
	return b.matrix(), blocks
}

func dense(a *Matrix) *mat.Dense {
	n := a.N()
	d := mat.NewDense(n, n, nil)
	for i := range n {
		for e := a.RowStart[i]; e < a.RowStart[i+1]; e++ {
			d.Set(i, int(a.Col[e]), d.At(i, int(a.Col[e]))+a.Val[e])
		}
	}
	return d
}

func factor(t *testing.T, a *Matrix, blocks []int) (*Analysis, *LU) {
	t.Helper()
	an, err := Analyze(a, blocks, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	lu, err := an.Factor(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	return an, lu
}

// The solve agrees with gonum's dense LU on random block triangular
// M-matrices of every size from a few states to several leaves of the
// dissection.
func TestSolveAgainstDense(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		n := 1 + r.IntN(400)
		a, blocks := randomMMatrix(r, n)
		_, lu := factor(t, a, blocks)
		b := make([]float64, n)
		for i := range b {
			b[i] = r.Float64()
		}
		want := mat.NewVecDense(n, nil)
		if err := want.SolveVec(dense(a), mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
			t.Fatal(err)
		}
		lu.Solve(b)
		for i := range b {
			if d := math.Abs(b[i] - want.AtVec(i)); d > 1e-9*max(1, math.Abs(want.AtVec(i))) {
				t.Fatalf("trial %d (n=%d, %d blocks): x[%d] = %.17g, dense %.17g", trial, n, len(blocks)-1, i, b[i], want.AtVec(i))
			}
		}
	}
}

// gridMatrix is I − Q for the lazy walk on a k×k grid that leaves through
// the left and right edges.
func gridMatrix(k int, move float64) *Matrix {
	n := k * k
	b := &builder{rows: make([][]entry, n)}
	for y := range k {
		for x := range k {
			i := y*k + x
			b.add(i, i, 4*move)
			for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
				nx, ny := x+d[0], y+d[1]
				switch {
				case nx < 0 || nx >= k:
					// leaves the grid
				case ny < 0 || ny >= k:
					b.add(i, i, -move) // reflected: stays
				default:
					b.add(i, ny*k+nx, -move)
				}
			}
		}
	}
	return b.matrix()
}

// On a grid the dissection's factors are far smaller than the band's
// (2·k³ entries for a k×k grid in row order), and the solve is exact to
// rounding: the residual of the computed x is at rounding level.
func TestGridFillAndResidual(t *testing.T) {
	const k = 120
	a := gridMatrix(k, 0x1p-12)
	an, lu := factor(t, a, []int{0, k * k})
	band := 2 * k * k * k
	t.Logf("entries %d (band %d), flops %.3g, %d supernodes, largest front %d", an.Entries, band, an.Flops, an.Supernodes, an.MaxFront)
	if an.Entries > band/3 || an.MaxFront > 3*k {
		t.Errorf("entries %d, largest front %d: the dissection did not find the grid's separators", an.Entries, an.MaxFront)
	}
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, k*k)
	for i := range x {
		x[i] = r.Float64()
	}
	b := make([]float64, k*k)
	for i := range b {
		for e := a.RowStart[i]; e < a.RowStart[i+1]; e++ {
			b[i] += a.Val[e] * x[a.Col[e]]
		}
	}
	lu.Solve(b)
	worst := 0.0
	for i := range b {
		worst = max(worst, math.Abs(b[i]-x[i]))
	}
	// The condition number is about 10⁷ here (τ ≈ k²·2¹⁰/8).
	if worst > 1e-6 {
		t.Errorf("largest error %g", worst)
	}
	t.Logf("largest error %.3g", worst)
}

// A random sparse graph has no small separator: the ordering gives up
// within a few breadth-first levels.
func TestExpanderRefused(t *testing.T) {
	const n = 100_000
	r := rand.New(rand.NewPCG(5, 6))
	b := &builder{rows: make([][]entry, n)}
	for i := range n {
		b.add(i, i, 1)
		for range 7 {
			b.add(i, r.IntN(n), -0.1)
		}
	}
	_, err := Analyze(b.matrix(), []int{0, n}, Limits{MaxSeparator: 1000, MaxEntries: 1 << 26})
	if !errors.Is(err, errTooWide) {
		t.Fatalf("err %v, want %v", err, errTooWide)
	}
	// With a wide separator allowed, the fill limit refuses it instead.
	_, err = Analyze(b.matrix(), []int{0, n}, Limits{MaxSeparator: n, MaxEntries: 1 << 22})
	if !errors.Is(err, errTooMuchFill) {
		t.Fatalf("err %v, want %v", err, errTooMuchFill)
	}
}

func TestNotBlockTriangular(t *testing.T) {
	b := &builder{rows: make([][]entry, 2)}
	b.add(0, 0, 1)
	b.add(0, 1, -0.5)
	b.add(1, 1, 1)
	if _, err := Analyze(b.matrix(), []int{0, 1, 2}, testLimits); err == nil {
		t.Fatal("an entry above the block diagonal was accepted")
	}
	if _, err := Analyze(b.matrix(), []int{0, 2}, testLimits); err != nil {
		t.Fatal(err)
	}
}

// A progress function that says stop stops the factorization; a matrix that
// is not an M-matrix (a zero pivot) is refused, not solved wrongly.
func TestStopAndBadPivot(t *testing.T) {
	a := gridMatrix(60, 0.01)
	an, err := Analyze(a, []int{0, 3600}, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	if _, err := an.Factor(a, func(float64) bool { calls++; return calls < 5 }); !errors.Is(err, ErrStopped) || calls != 5 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	b := &builder{rows: make([][]entry, 2)}
	b.add(0, 0, 1)
	b.add(0, 1, -1)
	b.add(1, 0, -1)
	b.add(1, 1, 1)
	sing := b.matrix()
	an, err = Analyze(sing, []int{0, 2}, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := an.Factor(sing, nil); err == nil {
		t.Fatal("a singular matrix was factorized")
	}
}
