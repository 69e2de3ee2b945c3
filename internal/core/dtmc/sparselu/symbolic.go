// SPDX-License-Identifier: Apache-2.0

package sparselu

import (
	"errors"
	"slices"
)

// errTooMuchFill refuses an ordering whose factors exceed Limits.MaxEntries;
// the column counts stop as soon as they pass it.
var errTooMuchFill = errors.New("sparselu: the factors would exceed the entry limit")

// symbolic is the analysis of a pattern: the ordering, the supernodes of the
// elimination tree and the structure and size of the factors. Indices are
// positions in the new order unless named otherwise.
type symbolic struct {
	n       int
	perm    []int32 // position → original index
	iperm   []int32 // original index → position
	blocks  []int   // block b: positions blocks[b]..blocks[b+1]
	blockSn []int   // block b: supernodes blockSn[b]..blockSn[b+1]
	snStart []int   // supernode s: columns snStart[s]..snStart[s+1]
	rowIdx  []int   // supernode s: rows[rowIdx[s]:rowIdx[s+1]]
	rows    []int32 // the rows of L below each supernode, increasing
	nchild  []int32 // supernodes whose parent is s
	// subtreeStart[s] is the first supernode of s's subtree, which in
	// postorder is subtreeStart[s]..s.
	subtreeStart []int
	valOff       []int // supernode s's values: p·k of U, then (k−p)·p of L
	entries      int
	flops        float64
	stack        int // the largest contribution stack plus front, in entries
	front        int // the largest front, in entries
}

// analyze orders g by nested dissection, block by block, and computes the
// symbolic factorization of the matrix whose pattern is g (plus the
// diagonal), with no fill between blocks.
func analyze(g *graph, blocks []int, lim Limits) (*symbolic, error) {
	n := len(g.start) - 1
	d := newDissector(g, lim.MaxSeparator)
	nodes := make([]int32, n)
	for i := range nodes {
		nodes[i] = int32(i)
	}
	for b := range len(blocks) - 1 {
		if err := d.dissect(nodes[blocks[b]:blocks[b+1]], 0); err != nil {
			return nil, err
		}
	}
	sym := &symbolic{n: n, perm: d.order, blocks: blocks}
	sym.iperm = inverse(sym.perm)
	parent := etree(g, sym.perm, sym.iperm)
	// Postordering keeps the fill and makes every subtree, and so every
	// supernode, a run of consecutive columns.
	post := postorder(parent)
	for i, j := range post {
		nodes[i] = sym.perm[j]
	}
	sym.perm = nodes
	sym.iperm = inverse(sym.perm)
	parent = etree(g, sym.perm, sym.iperm)
	counts, err := colCounts(g, sym.perm, sym.iperm, parent, lim.MaxEntries/2)
	if err != nil {
		return nil, err
	}
	sym.snStart = supernodes(parent, counts)
	snParent := sym.structure(g, parent)
	sym.sizes(snParent)
	if sym.entries > lim.MaxEntries {
		return nil, errTooMuchFill
	}
	return sym, nil
}

func inverse(perm []int32) []int32 {
	inv := make([]int32, len(perm))
	for i, v := range perm {
		inv[v] = int32(i)
	}
	return inv
}

// etree is the elimination tree of the permuted pattern (Liu's algorithm
// with path compression): parent[j] is the first row below j in column j
// of L, -1 at a root.
func etree(g *graph, perm, iperm []int32) []int32 {
	n := len(perm)
	parent, ancestor := make([]int32, n), make([]int32, n)
	for i := range n {
		parent[i], ancestor[i] = -1, -1
		for _, u := range g.neighbours(perm[i]) {
			for j := iperm[u]; j != -1 && j < int32(i); {
				next := ancestor[j]
				ancestor[j] = int32(i)
				if next == -1 {
					parent[j] = int32(i)
				}
				j = next
			}
		}
	}
	return parent
}

// postorder lists the nodes of the forest children first, the trees by
// increasing root, which keeps each block's positions together.
func postorder(parent []int32) []int32 {
	n := len(parent)
	head, next := make([]int32, n), make([]int32, n)
	for i := range head {
		head[i] = -1
	}
	for j := n - 1; j >= 0; j-- {
		if p := parent[j]; p != -1 {
			next[j], head[p] = head[p], int32(j)
		}
	}
	post := make([]int32, 0, n)
	var stack []int32
	for root := range n {
		if parent[root] != -1 {
			continue
		}
		stack = append(stack[:0], int32(root))
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if child := head[top]; child != -1 {
				head[top] = next[child]
				stack = append(stack, child)
				continue
			}
			stack = stack[:len(stack)-1]
			post = append(post, top)
		}
	}
	return post
}

// colCounts returns the number of entries below the diagonal in each column
// of L, by walking each row's subtree of the elimination tree; it fails as
// soon as the total passes limit, so a hopeless ordering costs little.
func colCounts(g *graph, perm, iperm, parent []int32, limit int) ([]int32, error) {
	n := len(perm)
	counts, mark := make([]int32, n), make([]int32, n)
	total := 0
	for i := range mark {
		mark[i] = -1
	}
	for i := range n {
		mark[i] = int32(i)
		for _, u := range g.neighbours(perm[i]) {
			for k := iperm[u]; k < int32(i) && mark[k] != int32(i); k = parent[k] {
				counts[k]++
				mark[k] = int32(i)
				total++
			}
		}
		if total > limit {
			return nil, errTooMuchFill
		}
	}
	return counts, nil
}

// supernodes groups the columns into supernodes: runs f..l in which each
// column's parent is the next, stored as one dense trapezoid (the columns'
// rows are nested, so the union is the last column's rows plus the run).
// Runs whose rows differ are merged too while the explicit zeros stay few
// (CHOLMOD's relaxed amalgamation): the fronts of a dissected grid's leaves
// are tiny, and fewer, larger fronts run the dense kernels longer.
func supernodes(parent, counts []int32) []int {
	n := len(parent)
	snStart := []int{0}
	f, sumCounts := 0, 0
	for j := 0; j < n; j++ {
		if j > f && parent[j-1] == int32(j) && relaxOK(j-f+1, int(counts[j]), sumCounts+int(counts[j])) {
			sumCounts += int(counts[j])
			continue
		}
		if j > 0 {
			snStart = append(snStart, j)
		}
		f, sumCounts = j, int(counts[j])
	}
	return append(snStart, n)
}

// relaxOK says whether a supernode of w columns, the last with c entries
// below the diagonal, the columns with sum entries in all, has few enough
// explicit zeros in its trapezoid to be stored as one.
func relaxOK(w, c, sum int) bool {
	trapezoid := w*(w-1)/2 + w*c
	zeros := trapezoid - sum
	switch {
	case zeros == 0 || w <= 4:
		return true
	case w <= 16:
		return float64(zeros) <= 0.8*float64(trapezoid)
	case w <= 48:
		return float64(zeros) <= 0.1*float64(trapezoid)
	default:
		return float64(zeros) <= 0.05*float64(trapezoid)
	}
}

// structure computes each supernode's rows below it, the union of its
// columns' pattern and its children's rows, and returns each supernode's
// parent (-1 at a root).
func (sym *symbolic) structure(g *graph, parent []int32) []int32 {
	ns := len(sym.snStart) - 1
	snOf := make([]int32, sym.n)
	for s := range ns {
		for j := sym.snStart[s]; j < sym.snStart[s+1]; j++ {
			snOf[j] = int32(s)
		}
	}
	snParent := make([]int32, ns)
	sym.nchild = make([]int32, ns)
	// children, as linked lists in increasing order.
	head, next := make([]int32, ns), make([]int32, ns)
	for s := range head {
		head[s] = -1
	}
	for s := ns - 1; s >= 0; s-- {
		snParent[s] = -1
		if p := parent[sym.snStart[s+1]-1]; p != -1 {
			snParent[s] = snOf[p]
			next[s], head[snOf[p]] = head[snOf[p]], int32(s)
			sym.nchild[snOf[p]]++
		}
	}
	sym.subtreeStart = make([]int, ns)
	for s := range ns {
		sym.subtreeStart[s] = s
	}
	for s := range ns {
		if p := snParent[s]; p != -1 {
			sym.subtreeStart[p] = min(sym.subtreeStart[p], sym.subtreeStart[s])
		}
	}
	mark := make([]int32, sym.n)
	for i := range mark {
		mark[i] = -1
	}
	sym.rowIdx = make([]int, 1, ns+1)
	for s := range ns {
		last := int32(sym.snStart[s+1] - 1)
		from := len(sym.rows)
		add := func(r int32) {
			if r > last && mark[r] != int32(s) {
				mark[r] = int32(s)
				sym.rows = append(sym.rows, r)
			}
		}
		for j := sym.snStart[s]; j <= int(last); j++ {
			for _, u := range g.neighbours(sym.perm[j]) {
				add(sym.iperm[u])
			}
		}
		for c := head[s]; c != -1; c = next[c] {
			for _, r := range sym.rows[sym.rowIdx[c]:sym.rowIdx[c+1]] {
				add(r)
			}
		}
		slices.Sort(sym.rows[from:])
		sym.rowIdx = append(sym.rowIdx, len(sym.rows))
	}
	return snParent
}

// sizes lays out the factors' values, counts the flops of the numeric
// factorization and the largest memory of its contribution stack, and finds
// each block's supernodes.
func (sym *symbolic) sizes(snParent []int32) {
	ns := len(sym.snStart) - 1
	sym.valOff = make([]int, ns+1)
	var pending []int // contribution blocks on the stack, in entries
	stack := 0
	for s := range ns {
		p := sym.snStart[s+1] - sym.snStart[s]
		r := sym.rowIdx[s+1] - sym.rowIdx[s]
		k := p + r
		sym.valOff[s+1] = sym.valOff[s] + p*k + r*p
		for i := range p {
			below := float64(k - i - 1)
			sym.flops += below + 2*below*below
		}
		// The children's contributions stay on the stack while the front
		// is assembled.
		sym.front = max(sym.front, k*k)
		sym.stack = max(sym.stack, stack+k*k)
		for range sym.nchild[s] {
			stack -= pending[len(pending)-1]
			pending = pending[:len(pending)-1]
		}
		if snParent[s] != -1 {
			pending = append(pending, r*r)
			stack += r * r
		}
	}
	sym.entries = sym.valOff[ns]
	sym.blockSn = make([]int, 1, len(sym.blocks))
	s := 0
	for _, end := range sym.blocks[1:] {
		for s < ns && sym.snStart[s] < end {
			s++
		}
		sym.blockSn = append(sym.blockSn, s)
	}
}
