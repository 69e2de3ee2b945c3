// SPDX-License-Identifier: Apache-2.0

package sparselu

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// ErrStopped is returned by Factor when its progress function asked it to
// stop.
var ErrStopped = errors.New("sparselu: stopped")

// panel is the number of pivots eliminated together in a front: the
// trailing update is then one matrix product of that inner dimension.
const panel = 64

// split is the matrix in the new order, each entry once: within a block the
// entries on and above the diagonal by row (upper) and those below it by
// column (lower), which is how a front assembles them; the entries between
// blocks by row (cross), which the solve applies.
type split struct {
	upStart, loStart, crossStart []int
	upCol, loRow, crossCol       []int32
	upVal, loVal, crossVal       []float64
}

func splitMatrix(a *Matrix, sym *symbolic) *split {
	n := sym.n
	blockOf := make([]int32, n)
	for b := range len(sym.blocks) - 1 {
		for i := sym.blocks[b]; i < sym.blocks[b+1]; i++ {
			blockOf[i] = int32(b)
		}
	}
	sp := &split{upStart: make([]int, n+1), loStart: make([]int, n+1), crossStart: make([]int, n+1)}
	kind := func(i, j int32) int { // 0 upper, 1 lower, 2 cross
		switch {
		case blockOf[i] != blockOf[j]:
			return 2
		case j >= i:
			return 0
		}
		return 1
	}
	a.each(sym.iperm, func(i, j int32, _ float64) {
		switch kind(i, j) {
		case 0:
			sp.upStart[i+1]++
		case 1:
			sp.loStart[j+1]++
		default:
			sp.crossStart[i+1]++
		}
	})
	for i := range n {
		sp.upStart[i+1] += sp.upStart[i]
		sp.loStart[i+1] += sp.loStart[i]
		sp.crossStart[i+1] += sp.crossStart[i]
	}
	sp.upCol, sp.upVal = make([]int32, sp.upStart[n]), make([]float64, sp.upStart[n])
	sp.loRow, sp.loVal = make([]int32, sp.loStart[n]), make([]float64, sp.loStart[n])
	sp.crossCol, sp.crossVal = make([]int32, sp.crossStart[n]), make([]float64, sp.crossStart[n])
	up, lo, cross := append([]int(nil), sp.upStart...), append([]int(nil), sp.loStart...), append([]int(nil), sp.crossStart...)
	a.each(sym.iperm, func(i, j int32, v float64) {
		switch kind(i, j) {
		case 0:
			sp.upCol[up[i]], sp.upVal[up[i]] = j, v
			up[i]++
		case 1:
			sp.loRow[lo[j]], sp.loVal[lo[j]] = i, v
			lo[j]++
		default:
			sp.crossCol[cross[i]], sp.crossVal[cross[i]] = j, v
			cross[i]++
		}
	})
	return sp
}

// factorizer holds the state of the multifrontal factorization: supernodes
// are eliminated in postorder, each in a dense front that gathers its
// entries of the matrix and its children's contribution blocks (the Schur
// complements they leave), and leaves its own contribution on a stack.
type factorizer struct {
	sym   *symbolic
	sp    *split
	val   []float64
	front []float64
	stack []float64
	pos   []int32 // position → place in the current front
	local []int32 // a child's rows, as places in the current front
	kids  []int   // the current supernode's children, last first
}

func (fz *factorizer) run(progress func(done float64) bool) error {
	sym := fz.sym
	done, reported := 0.0, 0.0
	for s := range len(sym.snStart) - 1 {
		if err := fz.supernode(s); err != nil {
			return err
		}
		p, k := fz.dims(s)
		for i := range p {
			below := float64(k - i - 1)
			done += below + 2*below*below
		}
		if progress != nil && done-reported > sym.flops/1000 {
			reported = done
			if !progress(done / sym.flops) {
				return ErrStopped
			}
		}
	}
	return nil
}

// dims is the number of pivots of supernode s and the order of its front.
func (fz *factorizer) dims(s int) (p, k int) {
	sym := fz.sym
	p = sym.snStart[s+1] - sym.snStart[s]
	return p, p + sym.rowIdx[s+1] - sym.rowIdx[s]
}

// supernode assembles, factorizes and stores supernode s.
func (fz *factorizer) supernode(s int) error {
	sym := fz.sym
	f := sym.snStart[s]
	p, k := fz.dims(s)
	rows := sym.rows[sym.rowIdx[s]:sym.rowIdx[s+1]]
	for c := range p {
		fz.pos[f+c] = int32(c)
	}
	for t, r := range rows {
		fz.pos[r] = int32(p + t)
	}
	F := fz.front[:k*k]
	clear(F)
	fz.assemble(F, f, p, k)
	fz.extendAdd(F, s, k)
	if err := partialLU(F, k, p); err != nil {
		return fmt.Errorf("%w (column %d)", err, f)
	}
	// The p rows of U (with L's unit lower triangle) are F's first p rows;
	// L below them is F's first p columns.
	off := sym.valOff[s]
	copy(fz.val[off:off+p*k], F[:p*k])
	off += p * k
	r := k - p
	for t := range r {
		copy(fz.val[off+t*p:off+t*p+p], F[(p+t)*k:(p+t)*k+p])
	}
	// The contribution block, F's trailing r×r, for the parent.
	if r > 0 {
		base := len(fz.stack)
		fz.stack = slices.Grow(fz.stack, r*r)[:base+r*r]
		for t := range r {
			copy(fz.stack[base+t*r:base+t*r+r], F[(p+t)*k+p:(p+t)*k+k])
		}
	}
	return nil
}

// assemble adds the matrix's entries of the pivot columns f..f+p−1 to the
// front: their rows from the diagonal on, and their columns below it.
func (fz *factorizer) assemble(F []float64, f, p, k int) {
	sp := fz.sp
	for c := range p {
		j := f + c
		for e := sp.upStart[j]; e < sp.upStart[j+1]; e++ {
			F[c*k+int(fz.pos[sp.upCol[e]])] += sp.upVal[e]
		}
		for e := sp.loStart[j]; e < sp.loStart[j+1]; e++ {
			F[int(fz.pos[sp.loRow[e]])*k+c] += sp.loVal[e]
		}
	}
}

// extendAdd adds the children's contribution blocks, the top of the stack in
// the children's order, to the front and pops them.
func (fz *factorizer) extendAdd(F []float64, s, k int) {
	sym := fz.sym
	total := 0
	children := fz.kids[:0]
	// The children are the nearest earlier supernodes whose parent is s:
	// walk back over whole subtrees.
	for c := s - 1; len(children) < int(sym.nchild[s]); {
		children = append(children, c)
		r := sym.rowIdx[c+1] - sym.rowIdx[c]
		total += r * r
		c = sym.subtreeStart[c] - 1
	}
	base := len(fz.stack) - total
	off := base
	for i := len(children) - 1; i >= 0; i-- {
		c := children[i]
		rows := sym.rows[sym.rowIdx[c]:sym.rowIdx[c+1]]
		r := len(rows)
		fz.local = fz.local[:0]
		for _, row := range rows {
			fz.local = append(fz.local, fz.pos[row])
		}
		for a, la := range fz.local {
			dst := F[int(la)*k:]
			src := fz.stack[off+a*r : off+a*r+r]
			for b, lb := range fz.local {
				dst[lb] += src[b]
			}
		}
		off += r * r
	}
	fz.stack = fz.stack[:base]
	fz.kids = children
}

// partialLU eliminates the first p pivots of the k×k row-major front F
// without pivoting, blocked by panels: F's first p rows become U (and L's
// unit lower triangle), its first p columns below them L, and its trailing
// block the Schur complement. A pivot that is not positive and finite stops
// it: the matrix is then not a non-singular M-matrix in floating point.
func partialLU(F []float64, k, p int) error {
	for j0 := 0; j0 < p; j0 += panel {
		j1 := min(j0+panel, p)
		for j := j0; j < j1; j++ {
			piv := F[j*k+j]
			if !(piv > 0) || math.IsInf(piv, 0) {
				return fmt.Errorf("sparselu: pivot %g", piv)
			}
			rowJ := F[j*k+j+1 : j*k+j1]
			for i := j + 1; i < k; i++ {
				l := F[i*k+j] / piv
				F[i*k+j] = l
				if l == 0 {
					continue
				}
				rowI := F[i*k+j+1 : i*k+j1]
				for c, u := range rowJ {
					rowI[c] -= l * u
				}
			}
		}
		if j1 == k {
			continue
		}
		// U12 = L11⁻¹·F12, then F22 −= L21·U12.
		blas64.Trsm(blas.Left, blas.NoTrans, 1,
			blas64.Triangular{Uplo: blas.Lower, Diag: blas.Unit, N: j1 - j0, Stride: k, Data: F[j0*k+j0:]},
			blas64.General{Rows: j1 - j0, Cols: k - j1, Stride: k, Data: F[j0*k+j1:]})
		blas64.Gemm(blas.NoTrans, blas.NoTrans, -1,
			blas64.General{Rows: k - j1, Cols: j1 - j0, Stride: k, Data: F[j1*k+j0:]},
			blas64.General{Rows: j1 - j0, Cols: k - j1, Stride: k, Data: F[j0*k+j1:]},
			1, blas64.General{Rows: k - j1, Cols: k - j1, Stride: k, Data: F[j1*k+j1:]})
	}
	return nil
}
