// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// TransitionBound is the Chen/Massart transition-wise bound H(n, m, ε, δ) of
// spec §3: (2/ε²)·ln(2/δ)·[1/4 − (|1/2 − m/n| − 2ε/3)²], clamped at 0. With
// n = 0 the frequency m/n is unknown and the bracket takes its largest
// value, 1/4.
func TransitionBound(n, m uint64, eps, delta float64) float64 {
	bracket := 0.25
	if n > 0 {
		d := math.Abs(0.5-float64(m)/float64(n)) - 2*eps/3
		bracket -= d * d
	}
	return max(0, 2/(eps*eps)*math.Log(2/delta)*bracket)
}

// OkamotoTraces is the number of traces that estimate one reachability
// probability from the start state within ε with confidence 1 − δ by
// frequency: ⌈ln(2/δ)/(2ε²)⌉.
func OkamotoTraces(eps, delta float64) uint64 {
	return uint64(math.Ceil(math.Log(2/delta) / (2 * eps * eps)))
}

// PACState is one learned state's line of the report.
type PACState struct {
	Name      string
	Visits    uint64  // n_s
	HStar     float64 // max over valid successors t of H(n_s, n_st, ε, δ/|S|)
	Required  float64 // (11/10 · B̂)² · H*
	Satisfied bool    // Visits ≥ Required
	More      uint64  // visits still needed at the current frequencies
}

// PACReport says whether the model is (ε, δ)-certified and which states need
// how many more visits.
type PACReport struct {
	Epsilon, Delta float64
	NumStates      int // |S|, over which δ is split
	Mode           SmoothingMode
	Unsafe         string
	// The conditioning bound B̂ = ½ · max k_s · max τ (spec §3), with τ the
	// expected steps to absorption in unsafe ∪ Prob0, a guaranteed upper bound.
	TauMax, BHat float64
	MaxK         int
	States       []PACState
	// Certified: every learned state satisfies the stopping rule (Laplace), or
	// there are at least Okamoto traces (frequency).
	Certified bool
	Traces    uint64
	Okamoto   uint64
}

// PAC computes the report for the model's unsafe formula.
func (m *Model) PAC(eps, delta float64, sv *Solver) (*PACReport, error) {
	if !(eps > 0 && eps < 1) || !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("epsilon %v, delta %v: both must be in (0, 1)", eps, delta)
	}
	if m.unsafe == nil {
		return nil, errors.New("the model has no unsafe formula: the conditioning bound needs the property")
	}
	r := &PACReport{Epsilon: eps, Delta: delta, NumStates: len(m.states), Mode: m.spec.Smoothing.Mode,
		Unsafe: m.unsafe.String(), Traces: m.counts.Traces(), Okamoto: OkamotoTraces(eps, delta)}
	tau := make([]float64, len(m.states))
	var err error
	if r.TauMax, err = sv.ExpectedSteps(m.chain, m.Label(m.unsafe), tau); err != nil {
		return nil, err
	}
	for i := range m.states {
		if m.Learned(i) {
			r.MaxK = max(r.MaxK, m.successes[i])
		}
	}
	r.BHat = 0.5 * float64(r.MaxK) * r.TauMax
	factor := (1.1 * r.BHat) * (1.1 * r.BHat)
	r.Certified = true
	for i := range m.states {
		if !m.Learned(i) {
			continue
		}
		st := m.pacState(i, eps, delta/float64(len(m.states)), factor)
		r.Certified = r.Certified && st.Satisfied
		r.States = append(r.States, st)
	}
	if r.Mode == Frequency {
		r.Certified = r.Traces >= r.Okamoto
	}
	return r, nil
}

func (m *Model) pacState(i int, eps, delta, factor float64) PACState {
	s := m.states[i]
	st := PACState{Name: m.StateName(i), Visits: m.Visits(i)}
	for _, t := range m.states {
		if m.valid.allowed(s, t) {
			st.HStar = max(st.HStar, TransitionBound(st.Visits, m.counts.Pair(s, t), eps, delta))
		}
	}
	st.Required = factor * st.HStar
	st.Satisfied = float64(st.Visits) >= st.Required
	if !st.Satisfied {
		st.More = uint64(math.Ceil(st.Required)) - st.Visits
	}
	return st
}

// WriteText prints the report for a person.
func (r *PACReport) WriteText(w io.Writer) error {
	p := &errWriter{w: w}
	p.printf("PAC report: epsilon %g, delta %g over %d states (delta/|S| = %.4g per state)\n", r.Epsilon, r.Delta, r.NumStates, r.Delta/float64(r.NumStates))
	p.printf("property: always_safe, unsafe = %s; smoothing %s\n", r.Unsafe, r.Mode)
	p.printf("conditioning: max expected steps to absorption %.6g, max valid successors %d, B^ = 1/2 * %d * %.6g = %.4g\n", r.TauMax, r.MaxK, r.MaxK, r.TauMax, r.BHat)
	p.printf("stopping rule: visits >= (1.1 * B^)^2 * H* = %.6g * H*\n\n", (1.1*r.BHat)*(1.1*r.BHat))
	p.printf("%-*s %10s %12s %14s %14s  %s\n", r.nameWidth(), "STATE", "VISITS", "H*", "REQUIRED", "MORE", "OK")
	short, worst := 0, PACState{}
	for _, s := range r.States {
		ok := "yes"
		if !s.Satisfied {
			ok, short = "no", short+1
			if s.More > worst.More {
				worst = s
			}
		}
		p.printf("%-*s %10d %12.3f %14.0f %14d  %s\n", r.nameWidth(), s.Name, s.Visits, s.HStar, math.Ceil(s.Required), s.More, ok)
	}
	p.printf("\n")
	switch {
	case r.Mode == Frequency:
		p.printf("frequency estimation (Okamoto): %d traces needed, %d observed: %s\n", r.Okamoto, r.Traces, certified(r.Certified))
	case r.Certified:
		p.printf("certified: every learned state satisfies the stopping rule\n")
	default:
		p.printf("not certified: %d of %d learned states need more visits (most: %s, %d more)\n", short, len(r.States), worst.Name, worst.More)
	}
	return p.err
}

func (r *PACReport) nameWidth() int {
	w := len("STATE")
	for _, s := range r.States {
		w = max(w, len(s.Name))
	}
	return w
}

func certified(ok bool) string {
	if ok {
		return "certified"
	}
	return "not certified"
}

// errWriter keeps the first write error so that a report is a sequence of
// prints checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
