// SPDX-License-Identifier: Apache-2.0

package dtmc

// sccWork holds Tarjan's arrays, one entry a state.
type sccWork struct {
	index, low []int32 // DFS number (0: unvisited) and low-link
	onStack    []bool
	stack      []int32   // Tarjan's stack of states
	calls      []sccCall // the DFS, without recursion
	comp       []int32   // each state's component, numbered successors first
	start      []int     // counting sort: where each component begins in order
	order      []int32   // the maybe states, successors' SCCs first
}

type sccCall struct {
	state int32
	edge  int // next position in the state's row
}

// orderBySCC computes the strongly connected components of the graph of the
// maybe states and lists the states so that every component comes after the
// components it reaches: a Gauss-Seidel sweep in this order sees converged
// successors first, so an acyclic part is exact after one sweep. It returns
// the order and the number of components. Within a component the states
// stay in index order, which keeps a sweep over a large component reading
// the rows in memory order.
func (sv *Solver) orderBySCC(c *Chain) ([]int32, int) {
	w := &sv.scc
	n := c.NumStates()
	w.index, w.low, w.onStack = grow(w.index, n), grow(w.low, n), grow(w.onStack, n)
	clear(w.index)
	clear(w.onStack)
	w.comp = grow(w.comp, n)
	w.stack = w.stack[:0]
	next, components := int32(1), int32(0)
	for _, root := range sv.maybe {
		if w.index[root] != 0 {
			continue
		}
		w.calls = append(w.calls[:0], sccCall{root, c.rowStart[root]})
		w.visit(root, &next)
		for len(w.calls) > 0 {
			top := &w.calls[len(w.calls)-1]
			v := top.state
			if top.edge < c.rowStart[v+1] {
				t, p := c.col[top.edge], c.prob[top.edge]
				top.edge++
				if p == 0 || sv.class[t] != classMaybe {
					continue
				}
				if w.index[t] == 0 {
					w.calls = append(w.calls, sccCall{t, c.rowStart[t]})
					w.visit(t, &next)
				} else if w.onStack[t] {
					w.low[v] = min(w.low[v], w.index[t])
				}
				continue
			}
			w.calls = w.calls[:len(w.calls)-1]
			if len(w.calls) > 0 {
				parent := w.calls[len(w.calls)-1].state
				w.low[parent] = min(w.low[parent], w.low[v])
			}
			if w.low[v] == w.index[v] {
				w.popComponent(v, components)
				components++
			}
		}
	}
	return w.sortByComponent(sv.maybe, int(components)), int(components)
}

// sortByComponent lists the states by component, then by index: a counting
// sort of the index-ordered maybe states.
func (w *sccWork) sortByComponent(maybe []int32, components int) []int32 {
	w.start = grow(w.start, components+1)
	clear(w.start)
	for _, s := range maybe {
		w.start[w.comp[s]+1]++
	}
	for k := range components {
		w.start[k+1] += w.start[k]
	}
	w.order = grow(w.order, len(maybe))
	for _, s := range maybe {
		w.order[w.start[w.comp[s]]] = s
		w.start[w.comp[s]]++
	}
	return w.order
}

func (w *sccWork) visit(v int32, next *int32) {
	w.index[v], w.low[v] = *next, *next
	*next++
	w.stack = append(w.stack, v)
	w.onStack[v] = true
}

// popComponent takes the component rooted at v off the stack and numbers it.
func (w *sccWork) popComponent(v, id int32) {
	for {
		u := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.onStack[u] = false
		w.comp[u] = id
		if u == v {
			return
		}
	}
}
