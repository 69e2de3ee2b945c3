// SPDX-License-Identifier: Apache-2.0

package sparselu

import "errors"

// errTooWide refuses a graph whose separators would make dense fronts too
// large to factorize: an expander (a random sparse chain) has no small
// separator, and its breadth-first levels grow geometrically, so the search
// stops after touching a few thousand nodes.
var errTooWide = errors.New("sparselu: no narrow separator (a breadth-first level is too wide)")

// leafSize is the subgraph size below which dissection stops: the fronts of
// a leaf are at most this wide, and splitting further costs more searches
// than it saves in fill.
const leafSize = 48

// graph is an undirected graph in compressed form, without self-loops.
type graph struct {
	start []int
	adj   []int32
}

func (g *graph) neighbours(v int32) []int32 { return g.adj[g.start[v]:g.start[v+1]] }

// dissector orders a graph by nested dissection with breadth-first level
// structures (George and Liu's automatic nested dissection): from a
// pseudo-peripheral node, the middle level separates the levels before it
// from those after; both halves are ordered recursively, the separator last.
// On a k×k grid the separators are diagonals of about k nodes, and the
// factor holds O(k² log k) entries, against k³ for the band.
type dissector struct {
	g      *graph
	part   []int32 // the subgraph a node belongs to; ordered nodes get -1
	mark   []int32 // the search that last reached a node
	level  []int32 // its level in that search
	queue  []int32
	order  []int32 // the ordering: position → node
	search int32
	parts  int32
	maxSep int
}

func newDissector(g *graph, maxSep int) *dissector {
	n := len(g.start) - 1
	d := &dissector{g: g, part: make([]int32, n), mark: make([]int32, n), level: make([]int32, n),
		queue: make([]int32, 0, n), order: make([]int32, 0, n), maxSep: maxSep}
	for i := range d.mark {
		d.mark[i] = -1
	}
	return d
}

// dissect appends an ordering of nodes, which all carry the subgraph id
// part, to d.order. It reorders nodes in place, so that no recursion level
// allocates.
func (d *dissector) dissect(nodes []int32, part int32) error {
	if len(nodes) <= leafSize {
		d.emit(nodes)
		return nil
	}
	root, err := d.peripheral(nodes[0], part)
	if err != nil {
		return err
	}
	levels, err := d.bfs(root, part)
	if err != nil {
		return err
	}
	if reached := len(d.queue); reached < len(nodes) {
		// Disconnected: the component of root, then the rest.
		return d.splitComponent(nodes)
	}
	if len(levels) <= 3 {
		// No level separates much (a near-clique): order it as it is.
		d.emit(nodes)
		return nil
	}
	mid := middleLevel(levels, len(nodes))
	sep := d.trimSeparator(int32(mid), part)
	if sep > d.maxSep {
		return errTooWide
	}
	a, b, before, after := d.partition(nodes, int32(mid))
	if err := d.dissect(nodes[:a], before); err != nil {
		return err
	}
	if err := d.dissect(nodes[a:a+b], after); err != nil {
		return err
	}
	d.emit(nodes[a+b:])
	return nil
}

// emit appends nodes to the ordering and takes them out of every subgraph.
func (d *dissector) emit(nodes []int32) {
	for _, v := range nodes {
		d.part[v] = -1
	}
	d.order = append(d.order, nodes...)
}

// peripheral finds a pseudo-peripheral node of the subgraph: a node of least
// degree in the last level of a search, repeated while that deepens it.
func (d *dissector) peripheral(start int32, part int32) (int32, error) {
	root, depth := start, 0
	for range 4 {
		levels, err := d.bfs(root, part)
		if err != nil {
			return 0, err
		}
		if len(levels) <= depth {
			break
		}
		depth = len(levels)
		last := d.queue[levels[len(levels)-1]:]
		best := last[0]
		for _, v := range last {
			if len(d.g.neighbours(v)) < len(d.g.neighbours(best)) {
				best = v
			}
		}
		root = best
	}
	return root, nil
}

// bfs searches the subgraph from root: d.queue holds the nodes reached in
// order, and the returned slice the start of each level in it. It fails as
// soon as a level is wider than twice the separator limit (a search from an
// inner node has levels up to twice as wide as the separator found later).
func (d *dissector) bfs(root int32, part int32) ([]int, error) {
	d.search++
	s := d.search
	d.queue = append(d.queue[:0], root)
	d.mark[root], d.level[root] = s, 0
	levels := []int{0}
	for head := 0; head < len(d.queue); head++ {
		v := d.queue[head]
		lv := d.level[v]
		for _, u := range d.g.neighbours(v) {
			if d.part[u] != part || d.mark[u] == s {
				continue
			}
			d.mark[u], d.level[u] = s, lv+1
			if int(lv+1) == len(levels) {
				if width := len(d.queue) - levels[len(levels)-1]; width > 2*d.maxSep {
					return nil, errTooWide
				}
				levels = append(levels, len(d.queue))
			}
			d.queue = append(d.queue, u)
		}
	}
	return levels, nil
}

// middleLevel is the level that holds the middle node in search order, but
// never the first or the last (either would separate nothing).
func middleLevel(levels []int, n int) int {
	mid := 1
	for mid+1 < len(levels)-1 && levels[mid+1] <= n/2 {
		mid++
	}
	return mid
}

// trimSeparator keeps in the separator (level mid of the last search) only
// the nodes with a neighbour in the next level; the others join the part
// before it. It returns the separator's size.
func (d *dissector) trimSeparator(mid int32, part int32) int {
	s, size := d.search, 0
	for _, v := range d.queue {
		if d.level[v] != mid {
			continue
		}
		needed := false
		for _, u := range d.g.neighbours(v) {
			if d.part[u] == part && d.mark[u] == s && d.level[u] == mid+1 {
				needed = true
				break
			}
		}
		if needed {
			size++
		} else {
			d.level[v] = mid - 1
		}
	}
	return size
}

// partition reorders nodes as [before | after | separator] by the levels of
// the last search, gives the two sides subgraph ids of their own and takes
// the separator out; it returns the sizes and ids of the two sides.
func (d *dissector) partition(nodes []int32, mid int32) (a, b int, before, after int32) {
	before, after = d.nextPartID(), d.nextPartID()
	var sep []int32
	w := 0
	for _, v := range nodes {
		switch lv := d.level[v]; {
		case lv < mid:
			d.part[v] = before
			nodes[w] = v
			w++
		case lv > mid:
			d.part[v] = after
		default:
			sep = append(sep, v)
		}
	}
	a = w
	// The nodes after the separator, in search order (the subgraph is
	// connected, so the search reached them all).
	for _, v := range d.queue {
		if d.level[v] > mid {
			nodes[w] = v
			w++
		}
	}
	b = w - a
	copy(nodes[w:], sep)
	for _, v := range sep {
		d.part[v] = -1
	}
	return a, b, before, after
}

// splitComponent orders a disconnected subgraph: the component the last
// search reached, then the rest, each a subgraph of its own.
func (d *dissector) splitComponent(nodes []int32) error {
	s := d.search
	comp, rest := d.nextPartID(), d.nextPartID()
	// Swap the reached nodes to the front.
	k := 0
	for i, v := range nodes {
		if d.mark[v] == s {
			nodes[i], nodes[k] = nodes[k], v
			k++
		}
	}
	for _, v := range nodes[:k] {
		d.part[v] = comp
	}
	for _, v := range nodes[k:] {
		d.part[v] = rest
	}
	if err := d.dissect(nodes[:k], comp); err != nil {
		return err
	}
	return d.dissect(nodes[k:], rest)
}

func (d *dissector) nextPartID() int32 {
	d.parts++
	return d.parts
}
