// SPDX-License-Identifier: Apache-2.0

// Package sparselu factorizes sparse non-singular M-matrices (I − Q for the
// transient part of a Markov chain) in block lower triangular form: each
// diagonal block (a strongly connected component) by a multifrontal LU
// without pivoting in a nested-dissection order, the blocks below the
// diagonal applied by block forward substitution, so that no fill crosses
// blocks.
//
// Without pivoting the factorization is that of the symmetrized pattern:
// L's pattern is the transpose of U's, both the Cholesky pattern of
// A + Aᵀ, so the ordering and the symbolic analysis are those of a
// symmetric matrix. That is sound for an M-matrix: every symmetric
// permutation of it is an M-matrix, Gaussian elimination keeps the Schur
// complements M-matrices, so the pivots stay positive and no entry grows
// (|l|, |u| are bounded by the matrix's own). A pivot that is not positive
// in floating point stops the factorization with an error.
package sparselu

import (
	"errors"
	"fmt"
)

// Matrix is a square sparse matrix in compressed sparse row form: row i's
// entries are Col[RowStart[i]:RowStart[i+1]] with values Val[...]. Entries
// may repeat (they are summed) and need not be sorted.
type Matrix struct {
	RowStart []int
	Col      []int32
	Val      []float64
}

// N is the matrix's order.
func (a *Matrix) N() int { return len(a.RowStart) - 1 }

// each calls fn with every entry, row and column mapped by iperm.
func (a *Matrix) each(iperm []int32, fn func(i, j int32, v float64)) {
	for r := range a.N() {
		i := iperm[r]
		for e := a.RowStart[r]; e < a.RowStart[r+1]; e++ {
			fn(i, iperm[a.Col[e]], a.Val[e])
		}
	}
}

// Limits bound what Analyze accepts.
type Limits struct {
	// MaxSeparator is the widest separator the dissection may choose; a
	// breadth-first level twice as wide stops the ordering. It bounds the
	// largest dense front.
	MaxSeparator int
	// MaxEntries bounds the entries of L and U together (8 bytes each).
	MaxEntries int
}

// Analysis is the ordering and symbolic factorization of a pattern.
type Analysis struct {
	sym *symbolic
	// Entries of the factors, Flops of the numeric factorization, and Bytes
	// the largest memory it needs (factors, contribution stack, front).
	Entries int
	Flops   float64
	Bytes   int
	// Supernodes and the largest front's order.
	Supernodes, MaxFront int
}

// Analyze orders a (a block lower triangular matrix whose diagonal blocks
// are positions blocks[b]..blocks[b+1]) and computes the structure of its
// factors; it fails when the matrix is not block lower triangular or the
// factorization would exceed the limits.
func Analyze(a *Matrix, blocks []int, lim Limits) (*Analysis, error) {
	g, err := blockGraph(a, blocks)
	if err != nil {
		return nil, err
	}
	sym, err := analyze(g, blocks, lim)
	if err != nil {
		return nil, err
	}
	front := 0
	for s := range len(sym.snStart) - 1 {
		k := sym.snStart[s+1] - sym.snStart[s] + sym.rowIdx[s+1] - sym.rowIdx[s]
		front = max(front, k)
	}
	return &Analysis{sym: sym, Entries: sym.entries, Flops: sym.flops, Bytes: 8 * (sym.entries + sym.stack),
		Supernodes: len(sym.snStart) - 1, MaxFront: front}, nil
}

// blockGraph is the undirected graph of a's off-diagonal entries within
// each diagonal block, each edge once either way.
func blockGraph(a *Matrix, blocks []int) (*graph, error) {
	n := a.N()
	if len(blocks) < 2 || blocks[0] != 0 || blocks[len(blocks)-1] != n {
		return nil, fmt.Errorf("sparselu: blocks %d..%d do not cover 0..%d", blocks[0], blocks[len(blocks)-1], n)
	}
	blockOf := make([]int32, n)
	for b := range len(blocks) - 1 {
		if blocks[b+1] < blocks[b] {
			return nil, errors.New("sparselu: blocks out of order")
		}
		for i := blocks[b]; i < blocks[b+1]; i++ {
			blockOf[i] = int32(b)
		}
	}
	deg := make([]int, n+1)
	for i := range n {
		for _, j := range a.Col[a.RowStart[i]:a.RowStart[i+1]] {
			switch {
			case blockOf[j] > blockOf[i]:
				return nil, fmt.Errorf("sparselu: entry (%d, %d) above the block diagonal", i, j)
			case blockOf[j] == blockOf[i] && int(j) != i:
				deg[i+1]++
				deg[j+1]++
			}
		}
	}
	for i := range n {
		deg[i+1] += deg[i]
	}
	adj := make([]int32, deg[n])
	fill := append([]int(nil), deg[:n]...)
	for i := range n {
		for _, j := range a.Col[a.RowStart[i]:a.RowStart[i+1]] {
			if blockOf[j] == blockOf[i] && int(j) != i {
				adj[fill[i]], adj[fill[j]] = j, int32(i)
				fill[i]++
				fill[j]++
			}
		}
	}
	return dedupe(n, deg, adj), nil
}

// dedupe removes repeated neighbours (an edge present both ways) in place.
func dedupe(n int, start []int, adj []int32) *graph {
	mark := make([]int32, n)
	for i := range mark {
		mark[i] = -1
	}
	w := 0
	for i := range n {
		from := w
		for _, j := range adj[start[i]:start[i+1]] {
			if mark[j] != int32(i) {
				mark[j] = int32(i)
				adj[w] = j
				w++
			}
		}
		start[i] = from
	}
	start[n] = w
	return &graph{start: start, adj: adj[:w:w]}
}

// LU is the factorization of a matrix analysed by Analyze.
type LU struct {
	sym  *symbolic
	sp   *split
	val  []float64
	work []float64
}

// Factor computes the numeric factorization of a, which must have the
// pattern that was analysed. progress, if not nil, is called with the
// fraction of the flops done, about every 0.1%; returning false stops the
// factorization with ErrStopped.
func (an *Analysis) Factor(a *Matrix, progress func(done float64) bool) (*LU, error) {
	sym := an.sym
	if a.N() != sym.n {
		return nil, fmt.Errorf("sparselu: a matrix of order %d, analysed %d", a.N(), sym.n)
	}
	fz := &factorizer{sym: sym, sp: splitMatrix(a, sym), val: make([]float64, sym.entries),
		front: make([]float64, sym.front), pos: make([]int32, sym.n)}
	if err := fz.run(progress); err != nil {
		return nil, err
	}
	return &LU{sym: sym, sp: fz.sp, val: fz.val, work: make([]float64, sym.n)}, nil
}

// Solve overwrites v with A⁻¹v.
func (f *LU) Solve(v []float64) {
	sym, x := f.sym, f.work
	for i, u := range sym.perm {
		x[i] = v[u]
	}
	for b := range len(sym.blocks) - 1 {
		f.crossBlock(b, x)
		for s := sym.blockSn[b]; s < sym.blockSn[b+1]; s++ {
			f.forward(s, x)
		}
		for s := sym.blockSn[b+1] - 1; s >= sym.blockSn[b]; s-- {
			f.backward(s, x)
		}
	}
	for i, u := range sym.perm {
		v[u] = x[i]
	}
}

// crossBlock subtracts from block b's right-hand side the entries that
// couple it to the earlier blocks, whose solution x already holds.
func (f *LU) crossBlock(b int, x []float64) {
	sp := f.sp
	for i := f.sym.blocks[b]; i < f.sym.blocks[b+1]; i++ {
		sum := x[i]
		for e := sp.crossStart[i]; e < sp.crossStart[i+1]; e++ {
			sum -= sp.crossVal[e] * x[sp.crossCol[e]]
		}
		x[i] = sum
	}
}

// supernode is supernode s: its first column, its p columns, the rows of L
// below it, and its block of U (p rows of p+len(rows) values; L's block
// follows it).
func (f *LU) supernode(s int) (first, p int, rows []int32, u []float64) {
	sym := f.sym
	first = sym.snStart[s]
	p = sym.snStart[s+1] - first
	rows = sym.rows[sym.rowIdx[s]:sym.rowIdx[s+1]]
	u = f.val[sym.valOff[s] : sym.valOff[s]+p*(p+len(rows))]
	return first, p, rows, u
}

// forward solves L's supernode s in place: its unit lower triangle, then
// the update of the rows below it.
func (f *LU) forward(s int, x []float64) {
	first, p, rows, u := f.supernode(s)
	k := p + len(rows)
	l := f.val[f.sym.valOff[s]+len(u) : f.sym.valOff[s+1]]
	xs := x[first : first+p]
	for i := 1; i < p; i++ {
		sum := xs[i]
		for j, lij := range u[i*k : i*k+i] {
			sum -= lij * xs[j]
		}
		xs[i] = sum
	}
	for t, r := range rows {
		sum := 0.0
		for j, lrj := range l[t*p : t*p+p] {
			sum += lrj * xs[j]
		}
		x[r] -= sum
	}
}

// backward solves U's supernode s in place, the rows below it already
// solved.
func (f *LU) backward(s int, x []float64) {
	first, p, rows, u := f.supernode(s)
	k := p + len(rows)
	xs := x[first : first+p]
	for i := p - 1; i >= 0; i-- {
		row := u[i*k : i*k+k]
		sum := xs[i]
		for j := i + 1; j < p; j++ {
			sum -= row[j] * xs[j]
		}
		for t, r := range rows {
			sum -= row[p+t] * x[r]
		}
		xs[i] = sum / row[i]
	}
}
