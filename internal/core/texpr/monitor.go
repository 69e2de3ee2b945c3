// SPDX-License-Identifier: Apache-2.0

package texpr

import "fmt"

// Event is one sampling event: the truth of every declared predicate (bit i
// for predicate i), its timestamp, and an opaque reference to its source that
// verdicts hand back (an index into the caller's own table). For a capture
// predicate (Assertion.Captures) bit i says only that its event-local part
// holds; Captures then tells what it does with a thread's dict.
type Event struct {
	Bits     uint64
	Time     int64
	Ref      int
	Captures Captures // nil unless some predicate captures or compares
}

// MaxPredicates is the number of predicates an Event can carry.
const MaxPredicates = 64

// EndPolicy decides what an evaluation still live at the end of the sequence
// means (spec §5).
type EndPolicy int

const (
	// EndInconclusive reports a live evaluation without a match as PENDING.
	EndInconclusive EndPolicy = iota
	// EndFail makes a live always-evaluation without a match a FAILURE at the
	// last cycle: the strong reading, for obligations that must complete.
	EndFail
	// EndIgnore drops live evaluations, as the reference package does.
	EndIgnore
)

// ParseEndPolicy reads a policy's configuration name.
func ParseEndPolicy(s string) (EndPolicy, error) {
	switch s {
	case "", "inconclusive":
		return EndInconclusive, nil
	case "fail":
		return EndFail, nil
	case "ignore":
		return EndIgnore, nil
	}
	return 0, fmt.Errorf("unknown end policy %q: valid values are \"inconclusive\", \"fail\" and \"ignore\"", s)
}

func (p EndPolicy) String() string {
	return [...]string{"inconclusive", "fail", "ignore"}[p]
}

// Trees says which verdicts get their trace tree.
type Trees int

const (
	TreesNone       Trees = iota
	TreesViolations       // only the verdicts that violate the assertion
	TreesAll
)

// DefaultMaxThreads is the default cap on live evaluations per monitor.
const DefaultMaxThreads = 100_000

// Assertion is a compiled-ready assertion: always X, or never X.
type Assertion struct {
	Expr       *Expr
	Never      bool      // never: a match is a violation; else always: a failure is
	OnEnd      EndPolicy // what a live evaluation at Finish means
	MaxThreads int       // cap on live evaluations; 0 means DefaultMaxThreads
	Trees      Trees
	// Passes also reports the verdicts that satisfy the assertion (an always
	// match, a never failure); by default only violations, pending and
	// errors are reported, which keeps the hot path free of verdicts.
	Passes bool
	// Captures are the bits of the predicates that bind into or compare
	// with the capture dict (dict.go). An expression that uses one runs on
	// the tree evaluator, with a dict per thread; any other expression
	// ignores Captures and runs allocation-free.
	Captures uint64
	// Anchored starts the evaluation at the sequence's first event only,
	// not at every event: an obligation of the whole group ("X happens at
	// least once"), which no evaluation started at every event can state,
	// since each sees only the events from its start on.
	Anchored bool

	prog *node // the compiled expression, shared by its monitors (see Compile)
	dict bool  // the expression uses a capture predicate
}

// UsesCaptures reports whether e names a predicate of the captures mask.
func UsesCaptures(e *Expr, captures uint64) bool {
	if e == nil {
		return false
	}
	if e.Op == OpPred {
		return e.Index >= 0 && captures&(1<<uint(e.Index)) != 0
	}
	return UsesCaptures(e.L, captures) || UsesCaptures(e.R, captures)
}

// Compile compiles the expression once, so that the monitors made from this
// assertion afterwards share it (the compiled nodes are read-only): a
// processor makes a monitor per assertion per open group.
func (a *Assertion) Compile() {
	if a.MaxThreads <= 0 {
		a.MaxThreads = DefaultMaxThreads
	}
	a.prog = compile(a.Expr)
	a.dict = UsesCaptures(a.Expr, a.Captures)
}

// Kind is the kind of a verdict.
type Kind int

const (
	Match Kind = iota
	Failure
	Pending
	// Error: the thread cap was exceeded and the live evaluations abandoned.
	Error
)

func (k Kind) String() string {
	return [...]string{"MATCH", "FAILURE", "PENDING", "ERROR"}[k]
}

// Verdict is the outcome of one top-level evaluation.
type Verdict struct {
	Kind      Kind
	Start     int    // the evaluation's start cycle (Error: the oldest abandoned)
	End       int    // Match: end cycle; Failure: termination cycle; Error: the cycle it happened
	Count     uint64 // Match: how many matches end here; Error: evaluations abandoned
	StartRef  int    // the Ref of the start event
	EndRef    int    // the Ref of the end event
	Violation bool   // the verdict violates the assertion
	// Trees explains the verdict: a failure's record, or the records of the
	// Count matches, in order (missing when not asked for, or too large).
	Trees    []*Record
	TreeNote string // why Trees is missing although it was asked for
}

// root is a live top-level evaluation.
type root struct {
	eval    evaluation
	start   int
	matched bool
}

// Monitor runs one assertion over a sequence of events, one event at a time.
// It is not safe for concurrent use.
type Monitor struct {
	a         *Assertion // its compiled expression is a.prog
	run       *running   // nil until an evaluation outlives its start event or a verdict is reported, and after Rest with nothing running
	hist      []stored   // events from cycle base on: what a replay may need
	base      int
	cycle     int
	errors    int32
	finished  bool // Finish ran: the next Step starts a new sequence
	replaying bool // Replay: verdicts are decided without their trees
}

// running is what a monitor keeps only once it has something running or to
// report: a processor holds a monitor per assertion per open group, and in
// most groups most triggers have not held, so those monitors are a history
// and a few counters.
type running struct {
	mach     machine
	roots    []root
	dm       *dictState // capture mode (captures.go); nil otherwise
	verdicts []Verdict
}

// state is the monitor's running part, made when first needed.
func (m *Monitor) state() *running {
	if m.run == nil {
		m.run = &running{}
	}
	return m.run
}

// roots are the live top-level evaluations of the fast mode.
func (m *Monitor) roots() []root {
	if m.run == nil {
		return nil
	}
	return m.run.roots
}

// dm is the capture mode's state; nil in the fast mode and before the first event.
func (m *Monitor) dm() *dictState {
	if m.run == nil {
		return nil
	}
	return m.run.dm
}

// verdicts are the verdicts the last Step or Finish decided.
func (m *Monitor) verdicts() []Verdict {
	if m.run == nil {
		return nil
	}
	return m.run.verdicts
}

// clearVerdicts starts a Step's or a Finish's verdicts.
func (m *Monitor) clearVerdicts() {
	if m.run != nil {
		m.run.verdicts = m.run.verdicts[:0]
	}
}

// Rest lets go of what the monitor needs only while something runs or is to
// be reported, once the caller has taken the last Step's or Finish's verdicts:
// the verdicts and their explanation trees, and, when no evaluation runs,
// its running part with the free evaluations kept for reuse. A monitor of an
// open group waits for the group's next event with its history and counters
// only; the garbage collector marks what it keeps at every collection.
func (m *Monitor) Rest() {
	run := m.run
	if run == nil {
		return
	}
	if run.dm == nil && len(run.roots) == 0 && run.mach.live == 0 {
		m.run = nil
		return
	}
	if len(run.verdicts) > 0 {
		run.verdicts = nil // verdicts are rare: the next one allocates again
	}
}

// NewMonitor returns a monitor for a. Its expression may use at most
// MaxPredicates predicates.
func NewMonitor(a Assertion) *Monitor {
	if a.MaxThreads <= 0 {
		a.MaxThreads = DefaultMaxThreads
	}
	return NewMonitorOf(&a)
}

// NewMonitorOf is NewMonitor sharing the assertion a, which must not change
// while the monitor runs: a processor's monitors of one assertion, one per
// open group, then cost no copy of it. After a.Compile, making monitors of a
// from several goroutines at once is safe: nothing is written to a.
func NewMonitorOf(a *Assertion) *Monitor {
	m := &Monitor{}
	m.init(a)
	return m
}

// Init makes m a new monitor of the shared assertion a (see NewMonitorOf),
// in place: a caller can keep a group's monitors in one slice.
func (m *Monitor) Init(a *Assertion) { m.init(a) }

func (m *Monitor) init(a *Assertion) {
	if a.MaxThreads <= 0 {
		a.MaxThreads = DefaultMaxThreads
	}
	if a.prog == nil {
		a.prog = compile(a.Expr)
		a.dict = UsesCaptures(a.Expr, a.Captures)
	}
	*m = Monitor{a: a, base: 1}
}

// Replay steps the monitor by an event whose verdicts were reported
// before, as Step does but without building their trees: rebuilding a
// monitor from its history costs no explanation nobody reads.
func (m *Monitor) Replay(ev Event) {
	m.replaying = true
	m.Step(ev)
	m.replaying = false
}

// Reset starts the monitor again on its assertion, as Init does, keeping
// its buffers and its machine's free evaluations: a scratch monitor replayed
// again and again then allocates nothing once warm. A monitor in capture
// mode keeps nothing.
func (m *Monitor) Reset() {
	a := m.a
	if m.dm() != nil || a.dict {
		m.init(a)
		return
	}
	run := m.run
	if run != nil {
		for _, r := range run.roots {
			r.eval.free(&run.mach)
		}
		clear(run.roots)
		*run = running{mach: machine{pools: run.mach.pools}, roots: run.roots[:0], verdicts: run.verdicts[:0]}
	}
	*m = Monitor{a: a, base: 1, run: run, hist: m.hist[:0]}
}

// Cycle is the number of events consumed since the last Finish.
func (m *Monitor) Cycle() int { return m.cycle }

// Live is the number of top-level evaluations still running.
func (m *Monitor) Live() int {
	if dm := m.dm(); dm != nil {
		return len(m.roots()) + len(dm.roots)
	}
	return len(m.roots())
}

// Threads is the number of live sub-evaluations (in capture mode, the
// sub-evaluations the live roots created).
func (m *Monitor) Threads() int {
	if dm := m.dm(); dm != nil {
		return m.threads() + m.a.MaxThreads - dm.left
	}
	return m.threads()
}

// threads are the fast mode's live sub-evaluations.
func (m *Monitor) threads() int {
	if m.run == nil {
		return 0
	}
	return m.run.mach.live
}

// Step consumes the next event and returns the verdicts it decided. The slice
// is reused by the next call.
func (m *Monitor) Step(ev Event) []Verdict {
	m.clearVerdicts()
	if m.finished {
		m.hist, m.base, m.cycle, m.finished = m.hist[:0], 1, 0, false
		if dm := m.dm(); dm != nil {
			clear(dm.caps)
			dm.caps = dm.caps[:0]
		}
	}
	m.prune()
	m.cycle++
	m.hist = append(m.hist, stored{ev.Bits, ev.Time, ev.Ref})
	if m.a.dict {
		m.stepDict(ev) // by value: a pointer would move every Step's event to the heap
		return m.verdicts()
	}
	if m.stepRoots(ev) {
		return m.verdicts()
	}
	if !m.a.Anchored || m.cycle == 1 {
		m.startRoot(ev)
	}
	if m.threads() > m.a.MaxThreads {
		m.abandon()
	}
	return m.verdicts()
}

// stepRoots advances the live top-level evaluations; true when the thread
// cap was exceeded and they were abandoned.
func (m *Monitor) stepRoots(ev Event) bool {
	run := m.run
	if run == nil || len(run.roots) == 0 {
		return false
	}
	live := run.roots[:0]
	for i, r := range run.roots {
		if m.stepRoot(&r, ev) {
			live = append(live, r)
		}
		if run.mach.live > m.a.MaxThreads {
			run.roots = append(live, run.roots[i+1:]...)
			m.abandon()
			return true
		}
	}
	clear(run.roots[len(live):])
	run.roots = live
	return false
}

// startRoot begins the evaluation that starts at this event; most end at
// once, and only a survivor is kept. One whose trigger does not hold is
// decided without the running part.
func (m *Monitor) startRoot(ev Event) {
	r := root{start: m.cycle}
	k, decided := decidedAtStart(m.a.prog, ev.Bits)
	alive := false
	if !decided {
		r.eval, k, alive = m.state().mach.begin(m.a.prog, ev.Bits)
	}
	m.settle(&r, k, alive)
	if alive {
		m.run.roots = append(m.run.roots, r)
	}
}

// stepRoot advances a top-level evaluation and frees it when it terminated.
func (m *Monitor) stepRoot(r *root, ev Event) bool {
	k, alive := r.eval.step(&m.run.mach, ev.Bits)
	m.settle(r, k, alive)
	if !alive {
		r.eval.free(&m.run.mach)
	}
	return alive
}

// settle reports what a top-level evaluation's step decided: its matches,
// and its failure when it terminated without one.
func (m *Monitor) settle(r *root, matches uint64, alive bool) {
	if matches > 0 {
		r.matched = true
		m.decided(Verdict{Kind: Match, Start: r.start, End: m.cycle, Count: matches, Violation: m.a.Never}, nil)
	}
	if !alive && !r.matched {
		m.decided(Verdict{Kind: Failure, Start: r.start, End: m.cycle, Violation: !m.a.Never}, nil)
	}
}

// abandon frees every live evaluation after the thread cap was exceeded.
func (m *Monitor) abandon() {
	run := m.run
	v := Verdict{Kind: Error, Start: run.roots[0].start, End: m.cycle, Count: uint64(len(run.roots)), Violation: true,
		TreeNote: fmt.Sprintf("more than %d live threads: %d evaluations started at cycles %d..%d abandoned",
			m.a.MaxThreads, len(run.roots), run.roots[0].start, m.cycle)}
	m.emit(v, nil)
	for _, r := range run.roots {
		r.eval.free(&run.mach)
	}
	clear(run.roots)
	run.roots = run.roots[:0]
	m.errors++
}

// Errors is how many times the thread cap was exceeded.
func (m *Monitor) Errors() int { return int(m.errors) }

// Finish applies the end policy to the evaluations still live. The next Step
// starts a new sequence at cycle 1; until then Timestamp still answers for
// the verdicts returned.
func (m *Monitor) Finish() []Verdict {
	m.clearVerdicts()
	m.finishDict()
	if run := m.run; run != nil {
		for _, r := range run.roots {
			if !r.matched {
				m.finishLive(r.start, nil)
			}
			r.eval.free(&run.mach)
		}
		clear(run.roots)
		run.roots = run.roots[:0]
	}
	m.finished = true
	return m.verdicts()
}

// finishLive applies the end policy to a live evaluation started at start;
// record, in capture mode, is its termination record (else a replay makes
// it when wanted).
func (m *Monitor) finishLive(start int, record func() *Record) {
	switch {
	case m.a.OnEnd == EndInconclusive:
		m.emit(Verdict{Kind: Pending, Start: start, End: m.cycle}, nil)
	case m.a.OnEnd == EndFail && !m.a.Never:
		v := Verdict{Kind: Failure, Start: start, End: m.cycle, Violation: true}
		var trees []*Record
		if record != nil && m.wantsTree(v) {
			trees = []*Record{record()}
		}
		m.emit(v, trees)
	}
}

// decided reports a match or failure the assertion asks for.
func (m *Monitor) decided(v Verdict, trees []*Record) {
	if v.Violation || m.a.Passes {
		m.emit(v, trees)
	}
}

func (m *Monitor) wantsTree(v Verdict) bool {
	return !m.replaying && v.Kind != Pending && v.Kind != Error && (m.a.Trees == TreesAll || (m.a.Trees == TreesViolations && v.Violation))
}

// emit reports a verdict with its trees: the given ones (capture mode builds
// them as it evaluates), else a replay's when they are wanted.
func (m *Monitor) emit(v Verdict, trees []*Record) {
	v.StartRef = m.event(v.Start).Ref
	v.EndRef = m.event(v.End).Ref
	switch {
	case trees != nil:
		if len(trees) > 0 {
			v.Trees = trees
		}
	case m.wantsTree(v):
		m.explain(&v)
	}
	run := m.state()
	run.verdicts = append(run.verdicts, v)
}

// stored is an event as the history keeps it; capture mode keeps the
// events' captures beside it (dictState.caps), so that a monitor without
// captures keeps no room for them: a processor holds a monitor per assertion
// per open group.
type stored struct {
	Bits uint64
	Time int64
	Ref  int
}

func (m *Monitor) event(cycle int) stored { return m.hist[cycle-m.base] }

// replayed is the event of a cycle in the history, as the tree evaluator
// takes it.
func (m *Monitor) replayed(cycle int) Event {
	h := m.hist[cycle-m.base]
	ev := Event{Bits: h.Bits, Time: h.Time, Ref: h.Ref}
	if dm := m.dm(); dm != nil {
		ev.Captures = dm.caps[cycle-m.base]
	}
	return ev
}

// Timestamp is the time of a cycle still in the monitor's history (the
// cycles of the verdicts just returned are).
func (m *Monitor) Timestamp(cycle int) int64 { return m.event(cycle).Time }

// prune forgets the events no live evaluation can replay. It compacts only
// when at least half the history is dead, so each event is copied O(1) times.
func (m *Monitor) prune() {
	oldest := m.cycle + 1
	if roots := m.roots(); len(roots) > 0 {
		oldest = roots[0].start
	}
	dm := m.dm()
	if dm != nil && len(dm.roots) > 0 {
		oldest = dm.roots[0].start
	}
	dead := oldest - m.base
	if dead == 0 || dead*2 < len(m.hist) {
		return
	}
	// Stored events hold no pointers: the dropped tail needs no clearing.
	n := copy(m.hist, m.hist[dead:])
	m.hist = m.hist[:n]
	if dm != nil {
		copy(dm.caps, dm.caps[dead:])
		clear(dm.caps[n:])
		dm.caps = dm.caps[:n]
	}
	m.base = oldest
}

// explain replays the verdict's events through the tree evaluator.
func (m *Monitor) explain(v *Verdict) {
	defer func() {
		if r := recover(); r != nil {
			if r != errTreeBudget {
				panic(r)
			}
			v.Trees, v.TreeNote = nil, fmt.Sprintf("trace omitted: more than %d threads", m.a.MaxThreads)
		}
	}()
	rp := newReplay(m.a.MaxThreads, m.a.Captures)
	ev := rp.start(m.a.Expr, v.Start, Dict{})
	for c := v.Start; c <= v.End; c++ {
		e := m.replayed(c)
		ms, alive := ev.step(c, &e)
		if c == v.End && v.Kind == Match {
			v.Trees = ms
			return
		}
		if !alive {
			break
		}
	}
	v.Trees = []*Record{ev.record(v.End)}
}
