// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"
	"time"
)

// Defaults of Options.
const (
	DefaultTolerance = 1e-9
	DefaultDirectMax = 300
	DefaultMaxSweeps = 10_000_000
)

// denseFallbackMax is the most maybe states factorized densely when neither
// the band nor BiCGSTAB certified the answer: 8 MB and about a second.
const denseFallbackMax = 1000

// Options configure a Solver. The zero value asks for the defaults.
type Options struct {
	// Tolerance is the guaranteed absolute error of every probability
	// (default 1e-9); at least 1e-14, since float64 rounding is of order 1e-16
	// a step.
	Tolerance float64
	// DirectMax is the largest number of maybe states solved by dense LU
	// (default 300); beyond it a narrow band or a sparse LU is factorized,
	// and up to denseFallbackMax a system BiCGSTAB cannot certify is
	// factorized densely. A negative value never factorizes: it always
	// iterates.
	DirectMax int
	// MaxSweeps caps the sweeps of interval iteration (default 1e7).
	MaxSweeps int
	// Iteration chooses the method for systems too large for LU.
	Iteration Iteration
	// TimeLimit, when positive, stops Reach after about that long with
	// ErrTimeLimit and the best answer certified by then.
	TimeLimit time.Duration
	// Progress, when not nil, receives a report every few seconds of a
	// Reach that takes longer than a few seconds.
	Progress func(Progress)
}

// Iteration is the iterative method for large systems.
type Iteration string

// The iterative methods.
const (
	// IterationAuto tries BiCGSTAB with a verified error bound first, and
	// falls back to interval iteration if it does not converge or verify.
	IterationAuto Iteration = ""
	// IterationInterval always uses interval iteration.
	IterationInterval Iteration = "interval"
)

func (o Options) withDefaults() (Options, error) {
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	if !(o.Tolerance >= 1e-14 && o.Tolerance < 1) {
		return o, fmt.Errorf("tolerance %g: want a number in [1e-14, 1)", o.Tolerance)
	}
	if o.DirectMax == 0 {
		o.DirectMax = DefaultDirectMax
	}
	if o.Iteration != IterationAuto && o.Iteration != IterationInterval {
		return o, fmt.Errorf("iteration %q: valid values are \"\" (automatic) and %q", o.Iteration, IterationInterval)
	}
	if o.MaxSweeps == 0 {
		o.MaxSweeps = DefaultMaxSweeps
	}
	return o, nil
}

// Method says how the maybe states were solved.
type Method string

// The methods.
const (
	MethodGraph    Method = "graph"    // no maybe states: the graph precomputation decided everything
	MethodDirect   Method = "direct"   // dense LU and iterative refinement, with an a-posteriori error bound
	MethodBanded   Method = "banded"   // banded LU and iterative refinement, with an a-posteriori error bound
	MethodSparse   Method = "sparse"   // sparse LU in nested dissection order and iterative refinement, with an a-posteriori error bound
	MethodInterval Method = "interval" // interval iteration from below and above
	MethodKrylov   Method = "krylov"   // BiCGSTAB, with an a-posteriori error bound
	MethodBounded  Method = "bounded"  // k steps of exact iteration
	MethodNone     Method = "none"     // stopped by the time limit before any method had an answer: ½ everywhere
)

// Result describes one solve.
type Result struct {
	// Bound is the guaranteed absolute error: |P[s] − exact(s)| ≤ Bound for
	// every state, beyond float64 rounding of the last sweep (order 1e-16).
	Bound float64
	// Method used for the maybe states.
	Method Method
	// Prob0, Prob1 and Maybe count the states found to have probability 0,
	// probability 1, and neither.
	Prob0, Prob1, Maybe int
	// Sweeps of interval iteration, or BiCGSTAB iterations (each two passes
	// over the matrix); 0 for the other methods.
	Sweeps int
}

// state classes of the graph precomputation.
const (
	classMaybe uint8 = iota
	classProb1
	classProb0
)

// Solver computes reachability probabilities for every state at once. It
// keeps its work buffers between calls, so solving many properties or chains
// in turn allocates only when a chain is larger than any before. A Solver is
// not safe for concurrent use; use one per goroutine.
type Solver struct {
	opt Options

	class []uint8
	stack []int32
	maybe []int32      // the maybe states, increasing
	lu    [][2]float64 // interval iteration: lower and upper bound of each state
	next  []float64    // bounded iteration's second vector
	index []int32      // direct solve: position of a maybe state in the dense system
	dense []float64    // direct solve: I − Q and its factors, dense or banded
	sol   []float64    // direct solve: the right-hand side and solution by position
	tau   []float64    // expected steps to leave the maybe states, by state
	xhi   []float64    // direct solve: the solution, a double-double by state
	xlo   []float64
	kry   krylovWork
	scc   sccWork
	watch watch
}

// NewSolver returns a solver with the options, defaults filled in.
func NewSolver(opt Options) (*Solver, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Solver{opt: opt}, nil
}

// Options returns the solver's options with defaults filled in.
func (sv *Solver) Options() Options { return sv.opt }

// Reach writes P_s(F target) for every state s into p, which must have one
// entry a state.
func (sv *Solver) Reach(c *Chain, target []bool, p []float64) (Result, error) {
	if err := checkVectors(c, target, p); err != nil {
		return Result{}, err
	}
	res := sv.precompute(c, target)
	for s, cl := range sv.class {
		p[s] = 0
		if cl == classProb1 {
			p[s] = 1
		}
	}
	if res.Maybe == 0 {
		res.Method = MethodGraph
		return res, nil
	}
	sv.watch.begin(sv.opt)
	if sv.solveExact(c, p, &res) {
		return res, nil
	}
	if sv.watch.expired() {
		return sv.timeUp(p, res)
	}
	sv.watch.enter("interval iteration")
	sweeps, width, err := sv.intervalIterate(c, p, sv.opt.Tolerance)
	res.Method, res.Sweeps, res.Bound = MethodInterval, sweeps, width/2
	if width > 2*sv.opt.Tolerance && sv.watch.expired() {
		return sv.timeUp(p, res)
	}
	return res, err
}

// solveExact tries the methods with an a-posteriori bound, cheapest first
// for the system's shape, and reports whether one met the tolerance; res
// then has its method and bound. On the time limit it stops with res
// holding the best bound certified so far (0 when none).
func (sv *Solver) solveExact(c *Chain, p []float64, res *Result) bool {
	tol, direct := sv.opt.Tolerance, sv.opt.DirectMax >= 0
	small := res.Maybe <= sv.opt.DirectMax
	res.Bound = 0
	refined := func(method Method, f factorization, ok bool) bool {
		if !ok {
			return false
		}
		sv.watch.enter("refinement")
		// A bound is returned with the answer it bounds, written to p:
		// res describes what p holds.
		bound, ok := sv.solveRefined(c, f, p, tol)
		if bound > 0 {
			res.Method, res.Bound = method, bound
		}
		return ok
	}
	// Exact factorizations first where they are cheap: they certify
	// persistent chains, which no iteration does in reasonable time.
	if direct && small {
		f, ok := sv.factorDense(c)
		return refined(MethodDirect, f, ok)
	}
	if direct {
		if f, ok := sv.factorBanded(c); refined(MethodBanded, f, ok) {
			return true
		}
		// A sparse factorization whose fill stays low (a grid, a product
		// of a few small chains): cheaper than BiCGSTAB can be sure to be.
		// Up to denseFallbackMax states dense LU backs BiCGSTAB instead.
		if res.Maybe > denseFallbackMax {
			if f, ok := sv.factorSparse(c, true); refined(MethodSparse, f, ok) || sv.watch.expired() {
				return res.Method == MethodSparse && res.Bound <= tol
			}
		}
	}
	if sv.opt.Iteration == IterationAuto {
		sv.watch.enter("BiCGSTAB")
		bound, iters, ok := sv.solveKrylov(c, p, tol)
		if ok || sv.watch.expired() {
			if bound > 0 {
				res.Method, res.Bound, res.Sweeps = MethodKrylov, bound, iters
			}
			return ok
		}
	}
	if !direct {
		return false
	}
	// A wide system that BiCGSTAB cannot certify: densely when that takes
	// well under a second, else by sparse LU whatever its fill, within the
	// limits of memory and time.
	if res.Maybe <= denseFallbackMax {
		f, ok := sv.factorDense(c)
		return refined(MethodDirect, f, ok)
	}
	f, ok := sv.factorSparse(c, false)
	return refined(MethodSparse, f, ok)
}

// timeUp ends a solve stopped by the time limit: the answer of the method
// that was running when its bound is below ½, else ½ on every maybe state,
// within ½ of any probability.
func (sv *Solver) timeUp(p []float64, res Result) (Result, error) {
	if !(res.Bound > 0 && res.Bound < 0.5) {
		for _, s := range sv.maybe {
			p[s] = 0.5
		}
		res.Method, res.Bound = MethodNone, 0.5
	}
	return res, fmt.Errorf("%w after %v: the answers are certified within %.3g, not the requested %g",
		ErrTimeLimit, sv.opt.TimeLimit, res.Bound, sv.opt.Tolerance)
}

func checkVectors(c *Chain, target []bool, p []float64) error {
	if n := c.NumStates(); len(target) != n || len(p) != n {
		return fmt.Errorf("chain has %d states, target %d entries, result %d", n, len(target), len(p))
	}
	return nil
}

// precompute classifies the states: Prob0 are those that cannot reach the
// target; Prob1 are those that cannot reach Prob0 without passing the
// target; the rest (maybe) have a probability strictly between 0 and 1 and
// the linear system on them has a unique solution.
func (sv *Solver) precompute(c *Chain, target []bool) Result {
	n := c.NumStates()
	sv.class = grow(sv.class, n)
	for s := range n {
		sv.class[s] = classProb0
	}
	// Backwards from the target: everything reached can reach it.
	stack := sv.stack[:0]
	for s, t := range target {
		if t {
			sv.class[s] = classProb1
			stack = append(stack, int32(s))
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, u := range c.Predecessors(int(s)) {
			if sv.class[u] == classProb0 {
				sv.class[u] = classProb1
				stack = append(stack, u)
			}
		}
	}
	// Backwards from Prob0 avoiding the target: everything reached may miss
	// the target, so it is a maybe state.
	for s, cl := range sv.class {
		if cl == classProb0 {
			stack = append(stack, int32(s))
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, u := range c.Predecessors(int(s)) {
			if sv.class[u] == classProb1 && !target[u] {
				sv.class[u] = classMaybe
				stack = append(stack, u)
			}
		}
	}
	sv.stack = stack
	sv.maybe = sv.maybe[:0]
	var res Result
	for s, cl := range sv.class {
		switch cl {
		case classMaybe:
			sv.maybe = append(sv.maybe, int32(s))
		case classProb1:
			res.Prob1++
		default:
			res.Prob0++
		}
	}
	res.Maybe = len(sv.maybe)
	return res
}

// intervalIterate runs Gauss-Seidel sweeps on a lower bound starting at 0 and
// an upper bound starting at 1 over the maybe states, both in one pass over
// the matrix, until the bounds are within 2·tol everywhere; p receives the
// midpoints. Both stay bounds of the exact solution at every sweep: the lower
// from 0 is a sub-fixpoint, the upper from 1 a super-fixpoint, and because
// Prob0 states are fixed at 0 the fixpoint on the maybe states is unique, so
// both converge to it. A self-loop is solved for exactly rather than
// iterated, which matters for learned chains with heavy self-loops. The
// sweeps visit the strongly connected components successors first, so the
// acyclic parts of a chain converge in one sweep.
func (sv *Solver) intervalIterate(c *Chain, p []float64, tol float64) (sweeps int, width float64, err error) {
	n := c.NumStates()
	sv.lu = grow(sv.lu, n)
	lu := sv.lu
	for s := range n {
		lu[s] = [2]float64{p[s], p[s]}
	}
	for _, s := range sv.maybe {
		lu[s] = [2]float64{0, 1}
	}
	order, _ := sv.orderBySCC(c)
	width = 1
	for sweeps < sv.opt.MaxSweeps && width > 2*tol && sv.watch.tickBound(width/2) {
		width = sweepInterval(c, order, lu)
		sweeps++
	}
	for _, s := range sv.maybe {
		p[s] = (lu[s][0] + lu[s][1]) / 2
	}
	if width > 2*tol {
		return sweeps, width, fmt.Errorf("interval iteration: bounds %.3g apart after %d sweeps, want %.3g", width, sweeps, 2*tol)
	}
	return sweeps, width, nil
}

// sweepInterval updates both bounds of every maybe state once and returns the
// largest width. The bounds of a state sit side by side so that one cache
// line brings both.
func sweepInterval(c *Chain, maybe []int32, lu [][2]float64) float64 {
	width := 0.0
	rowStart, col, prob := c.rowStart, c.col, c.prob
	for _, s := range maybe {
		lo, hi := rowStart[s], rowStart[s+1]
		cols, probs := col[lo:hi], prob[lo:hi]
		probs = probs[:len(cols)]
		low, up, self := 0.0, 0.0, 0.0
		for i, t := range cols {
			q := probs[i]
			if t == s {
				self = q
				continue
			}
			b := lu[t]
			low += q * b[0]
			up += q * b[1]
		}
		// self < 1 on a maybe state: it can leave towards the target.
		low /= 1 - self
		up = min(up/(1-self), 1)
		lu[s] = [2]float64{low, up}
		width = max(width, up-low)
	}
	return width
}

// BoundedReach writes P_s(F≤k target) for every state into p: k steps of
// exact iteration, p_{i+1}(s) = 1 on the target and Σ_t P(t|s)·p_i(t)
// elsewhere, starting from the target's indicator.
func (sv *Solver) BoundedReach(c *Chain, target []bool, k int, p []float64) (Result, error) {
	if err := checkVectors(c, target, p); err != nil {
		return Result{}, err
	}
	if k < 0 {
		return Result{}, fmt.Errorf("bound %d: want k ≥ 0", k)
	}
	res := sv.precompute(c, target)
	res.Method = MethodBounded
	n := c.NumStates()
	sv.next = grow(sv.next, n)
	cur, nxt := p, sv.next
	for s := range n {
		cur[s], nxt[s] = 0, 0
		if target[s] {
			cur[s], nxt[s] = 1, 1
		}
	}
	// Only states that can reach the target and are not on it change.
	live := sv.stack[:0]
	for s, cl := range sv.class {
		if cl != classProb0 && !target[s] {
			live = append(live, int32(s))
		}
	}
	for range k {
		for _, s := range live {
			cols, probs := c.Row(int(s))
			sum := 0.0
			for i, t := range cols {
				sum += probs[i] * cur[t]
			}
			nxt[s] = sum
		}
		cur, nxt = nxt, cur
	}
	if k%2 == 1 {
		copy(p, cur)
	}
	sv.stack = live
	return res, nil
}

func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}
