// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"errors"
	"math"
	"time"
)

// ErrTimeLimit is returned (wrapped) by Reach when Options.TimeLimit passed
// before the answer met the tolerance. The Result and the probabilities are
// still valid: Result.Bound is the best error bound certified by then (at
// worst ½, every maybe state answered ½).
var ErrTimeLimit = errors.New("time limit reached")

// Progress reports on a long solve.
type Progress struct {
	// Elapsed since the solve began.
	Elapsed time.Duration
	// Phase: "sparse LU", "BiCGSTAB", "refinement" or "interval iteration".
	Phase string
	// Done is the fraction of the phase done, when it is known (a
	// factorization's flops), else NaN; Left estimates its remaining time,
	// from Done or from the rate at which Bound shrinks (0 when unknown).
	Done float64
	Left time.Duration
	// Bound is the best certified bound on the error so far (interval
	// iteration's half width, refinement's residual bound), NaN when there
	// is none yet; Residual is BiCGSTAB's largest residual entry, else NaN.
	Bound, Residual float64
}

// Reports start after progressFirst and follow every progressEvery, so that
// a quick solve says nothing (variables for the tests).
var (
	progressFirst = 3 * time.Second
	progressEvery = 5 * time.Second
)

// watch times one solve: its deadline and its progress reports.
type watch struct {
	start, deadline, next time.Time
	report                func(Progress)
	phase                 string
	phaseStart            time.Time
	goal                  float64 // the bound the phase works towards
	// The bound and time of the phase's last report, whose ratio to the
	// next gives the rate at which the bound shrinks.
	lastBound float64
	lastTime  time.Time
}

func (w *watch) begin(opt Options) {
	now := time.Now()
	*w = watch{start: now, next: now.Add(progressFirst), report: opt.Progress, goal: opt.Tolerance}
	if opt.TimeLimit > 0 {
		w.deadline = now.Add(opt.TimeLimit)
	}
}

// enter starts a phase.
func (w *watch) enter(phase string) {
	w.phase, w.phaseStart, w.lastBound = phase, time.Now(), 0
}

// expired reports whether the deadline has passed.
func (w *watch) expired() bool {
	return !w.deadline.IsZero() && time.Now().After(w.deadline)
}

// tick reports the phase's state when a report is due, and says whether the
// solve may go on (false once the deadline passed). done is the fraction of
// the phase done or NaN; bound and residual as in Progress.
func (w *watch) tick(done, bound, residual float64) bool {
	now := time.Now()
	if w.report != nil && !now.Before(w.next) {
		w.next = now.Add(progressEvery)
		pr := Progress{Elapsed: now.Sub(w.start), Phase: w.phase, Done: done, Bound: bound, Residual: residual}
		pr.Left = w.left(now, done, bound)
		w.report(pr)
	}
	return w.deadline.IsZero() || now.Before(w.deadline)
}

// tickBound is tick for a phase that knows only a bound.
func (w *watch) tickBound(bound float64) bool { return w.tick(math.NaN(), bound, math.NaN()) }

// left estimates the phase's remaining time: from the fraction done, or
// else from the rate at which the bound shrank since the last report,
// extrapolated geometrically (as interval iteration converges) to the goal.
// 0 when it cannot tell.
func (w *watch) left(now time.Time, done, bound float64) time.Duration {
	defer func() { w.lastBound, w.lastTime = bound, now }()
	switch {
	case done < 0.05:
		// A factorization's first supernodes are small and slower per
		// flop than the large ones at the end: too early to tell.
		return 0
	case done < 1:
		return time.Duration(float64(now.Sub(w.phaseStart)) * (1 - done) / done)
	case !(bound > w.goal) || !(w.lastBound > bound):
		return 0
	}
	perSecond := math.Log(w.lastBound/bound) / now.Sub(w.lastTime).Seconds()
	return time.Duration(math.Log(bound/w.goal) / perSecond * float64(time.Second))
}
