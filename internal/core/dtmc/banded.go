// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math"
	"slices"
	"sort"
)

// bandedLU is the LU factorization without pivoting of I − Q on the maybe
// states, in index order or in the reverse Cuthill-McKee order when that is
// narrower, stored by rows within its band: entry (i, j) of the factors,
// |i − j| within the bandwidths, is at a[i*w + j − i + kl]. I − Q is a
// non-singular M-matrix (every maybe state can leave), so Gaussian
// elimination needs no pivoting, its pivots stay positive, and the factors
// stay within the band: a chain whose maybe states only step to nearby
// states in some order (a birth-death line is tridiagonal, however it is
// numbered) factorizes in time m·kl·ku without fill outside it.
type bandedLU struct {
	m, kl, ku, w int
	a            []float64
	perm         []int32   // band row → position among the maybe states; nil: the same
	work         []float64 // solve's permuted vector
}

// Limits of the banded factorization: the band's entries (memory) and the
// elimination's multiply-adds (time); beyond them the iterative methods are
// cheaper.
const (
	bandedMaxEntries = 1 << 24
	bandedMaxWork    = 1 << 29
)

// bandwidths returns the largest distances below and above the diagonal of
// the maybe states' system when state s is row row[s]; it stops early, with
// a band too wide, as soon as the band exceeds what may be stored.
func (sv *Solver) bandwidths(c *Chain, row []int32) (kl, ku int) {
	m := len(sv.maybe)
	for _, s := range sv.maybe {
		if bandTooWide(m, kl, ku) {
			return kl, ku
		}
		i := int(row[s])
		cols, probs := c.Row(int(s))
		for k, t := range cols {
			if sv.class[t] != classMaybe || probs[k] == 0 {
				continue
			}
			j := int(row[t])
			kl, ku = max(kl, i-j), max(ku, j-i)
		}
	}
	return kl, ku
}

func bandTooWide(m, kl, ku int) bool {
	return m*(kl+ku+1) > bandedMaxEntries || m*kl*max(ku, 1) > bandedMaxWork
}

// factorBanded factorizes the maybe states' system when its band, in index
// order or else in reverse Cuthill-McKee order, is narrow enough; false when
// it is not, or a pivot is not positive.
func (sv *Solver) factorBanded(c *Chain) (factorization, bool) {
	m := len(sv.maybe)
	sv.index = grow(sv.index, c.NumStates())
	for i, s := range sv.maybe {
		sv.index[s] = int32(i)
	}
	row := sv.index
	var perm []int32
	kl, ku := sv.bandwidths(c, row)
	if bandTooWide(m, kl, ku) {
		if perm, row = sv.reverseCuthillMcKee(c, bandedMaxEntries/m); perm == nil {
			return nil, false
		}
		if kl, ku = sv.bandwidths(c, row); bandTooWide(m, kl, ku) {
			return nil, false
		}
	}
	w := kl + ku + 1
	sv.dense = grow(sv.dense, m*w)
	f := &bandedLU{m: m, kl: kl, ku: ku, w: w, a: sv.dense, perm: perm}
	if perm != nil {
		f.work = make([]float64, m)
	}
	clear(f.a)
	for _, s := range sv.maybe {
		i := int(row[s])
		f.a[i*w+kl] = 1
		cols, probs := c.Row(int(s))
		for k, t := range cols {
			if sv.class[t] == classMaybe && probs[k] != 0 {
				f.a[i*w+int(row[t])-i+kl] -= probs[k]
			}
		}
	}
	for k := range m {
		piv := f.a[k*w+kl]
		if !(piv > 0) || math.IsInf(piv, 0) {
			return nil, false
		}
		for i := k + 1; i <= min(k+kl, m-1); i++ {
			l := f.a[i*w+k-i+kl] / piv
			f.a[i*w+k-i+kl] = l
			if l == 0 {
				continue
			}
			rowK, rowI := f.a[k*w+kl:k*w+w], f.a[i*w+k-i+kl:]
			// Entry (k, j) is rowK[j−k]; entry (i, j) is rowI[j−k].
			for j := 1; j < len(rowK) && k+j < m; j++ {
				rowI[j] -= l * rowK[j]
			}
		}
	}
	return f, true
}

// reverseCuthillMcKee orders the maybe states by breadth-first search over
// the undirected graph of their edges, each component from a state of least
// degree, neighbours by increasing degree, and reverses the order: the
// classic heuristic for a narrow band. It returns perm (band row → position
// among the maybe states) and row (state → band row), or nil as soon as a
// level of the search is wider than maxWidth: the band would be about as wide
// (a random sparse chain's levels grow geometrically), and the search stops
// after touching a few of its states.
func (sv *Solver) reverseCuthillMcKee(c *Chain, maxWidth int) (perm, row []int32) {
	m := len(sv.maybe)
	seen := make([]bool, m)
	// A probe first: a search from any state of a random sparse chain
	// widens past maxWidth within a few levels, and then the degrees of a
	// million states need not be counted.
	if _, ok := sv.searchFrom(c, 0, seen, make([]int32, 0, 64), maxWidth, nil); !ok {
		return nil, nil
	}
	clear(seen)
	starts, degree := sv.byDegree(c)
	perm = make([]int32, 0, m)
	for _, root := range starts {
		if seen[root] {
			continue
		}
		var ok bool
		if perm, ok = sv.searchFrom(c, root, seen, perm, maxWidth, degree); !ok {
			return nil, nil
		}
	}
	slices.Reverse(perm)
	row = make([]int32, c.NumStates())
	for k, i := range perm {
		row[sv.maybe[i]] = int32(k)
	}
	return perm, row
}

// maybeNeighbours calls visit with each maybe state joined to s by an edge,
// either way, other than s itself.
func (sv *Solver) maybeNeighbours(c *Chain, s int32, visit func(int32)) {
	cols, probs := c.Row(int(s))
	for k, t := range cols {
		if t != s && probs[k] != 0 && sv.class[t] == classMaybe {
			visit(t)
		}
	}
	for _, t := range c.Predecessors(int(s)) {
		if t != s && sv.class[t] == classMaybe {
			visit(t)
		}
	}
}

// searchFrom appends to order the maybe states (by index) that a
// breadth-first search from root reaches, marking them seen; with degree,
// each state's new neighbours by increasing degree. It stops, false, as soon
// as a level is wider than maxWidth.
func (sv *Solver) searchFrom(c *Chain, root int32, seen []bool, order []int32, maxWidth int, degree []int32) ([]int32, bool) {
	seen[root] = true
	order = append(order, root)
	levelEnd := len(order)
	for head := len(order) - 1; head < len(order); head++ {
		if head == levelEnd {
			if len(order)-levelEnd > maxWidth {
				return order, false
			}
			levelEnd = len(order)
		}
		from := len(order)
		sv.maybeNeighbours(c, sv.maybe[order[head]], func(t int32) {
			if j := sv.index[t]; !seen[j] {
				seen[j] = true
				order = append(order, j)
			}
		})
		if degree != nil {
			added := order[from:]
			sort.Slice(added, func(a, b int) bool { return degree[added[a]] < degree[added[b]] })
		}
	}
	return order, true
}

// byDegree is the maybe states (by index) in order of increasing degree in
// the undirected graph (a counting sort), and each one's degree.
func (sv *Solver) byDegree(c *Chain) (starts, degree []int32) {
	m := len(sv.maybe)
	degree = make([]int32, m)
	maxDegree := int32(0)
	for i, s := range sv.maybe {
		d := int32(0)
		sv.maybeNeighbours(c, s, func(int32) { d++ })
		degree[i], maxDegree = d, max(maxDegree, d)
	}
	first := make([]int, maxDegree+2)
	for _, d := range degree {
		first[d+1]++
	}
	for d := range maxDegree + 1 {
		first[d+1] += first[d]
	}
	starts = make([]int32, m)
	for i, d := range degree {
		starts[first[d]] = int32(i)
		first[d]++
	}
	return starts, degree
}

func (f *bandedLU) solve(v []float64) {
	if f.perm != nil {
		for k, i := range f.perm {
			f.work[k] = v[i]
		}
		f.solveBand(f.work)
		for k, i := range f.perm {
			v[i] = f.work[k]
		}
		return
	}
	f.solveBand(v)
}

func (f *bandedLU) solveBand(v []float64) {
	m, kl, ku, w, a := f.m, f.kl, f.ku, f.w, f.a
	for i := range m {
		sum := v[i]
		for k := max(0, i-kl); k < i; k++ {
			sum -= a[i*w+k-i+kl] * v[k]
		}
		v[i] = sum
	}
	for i := m - 1; i >= 0; i-- {
		sum := v[i]
		for j := i + 1; j <= min(i+ku, m-1); j++ {
			sum -= a[i*w+j-i+kl] * v[j]
		}
		v[i] = sum / a[i*w+kl]
	}
}
