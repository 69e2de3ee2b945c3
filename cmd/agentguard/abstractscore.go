// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/sequence"
)

// How abstract scores a candidate abstraction: cross-validated by episode,
// each episode's lowest P_safe before the hazard under the chain learned
// without its fold.

// states are the abstract state of every event under the predicates
// [hazard, chosen...] (bit i, predicate i), indexed as the atoms' holds.
func (eps episodeSet) states(preds []atom) []dtmc.State {
	out := make([]dtmc.State, len(preds[0].holds))
	for i, p := range preds {
		for k, h := range p.holds {
			if h {
				out[k] |= 1 << uint(i)
			}
		}
	}
	return out
}

// episode is episode e's slice of states.
func (eps episodeSet) episode(states []dtmc.State, e int) []dtmc.State {
	return states[eps.first[e] : eps.first[e]+len(eps.events[e])]
}

// runs are the episodes' events with their states' bits, for scoring.
func (eps episodeSet) runs(states []dtmc.State) [][]sequence.Event {
	out := make([][]sequence.Event, len(eps.events))
	for e, evs := range eps.events {
		out[e] = make([]sequence.Event, len(evs))
		for j, s := range eps.episode(states, e) {
			out[e][j] = sequence.Event{Start: evs[j].Start, Bits: uint64(s)}
		}
	}
	return out
}

// foldCounts are the transition counts of each fold's episodes (episode e
// is in fold e mod folds), counted once: a fold's training counts are the
// others' sum, not a count of its own.
func (eps episodeSet) foldCounts(states []dtmc.State, folds int) ([]*dtmc.Counts, error) {
	out := make([]*dtmc.Counts, folds)
	for f := range out {
		out[f] = dtmc.NewCounts()
	}
	for e := range eps.events {
		if err := out[e%folds].AddTrace(eps.episode(states, e)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// guardOf learns the chain of preds from counts and solves always_safe.
func (a *abstraction) guardOf(preds []atom, counts *dtmc.Counts) (*guard.Guard, error) {
	m, err := dtmc.Learn(dtmc.Spec{Predicates: names(preds), Smoothing: a.smoothing, Unsafe: preds[0].name}, counts)
	if err != nil {
		return nil, err
	}
	return newGuard(m, guard.Options{Property: dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: preds[0].name},
		Threshold: 0.5, Report: guard.ReportEvery, Unknown: guard.UnknownAlert})
}

// foldPlan is what every cross-validation of the episodes shares, the
// hazard being fixed: per episode whether it went unsafe and how many of
// its events come before the hazard, per fold the safe share of its
// training events before the hazard.
type foldPlan struct {
	folds  int
	unsafe []bool
	before []int
	share  []float64
}

func (eps episodeSet) planFolds(hazard atom, folds int) foldPlan {
	p := foldPlan{folds: folds, unsafe: make([]bool, len(eps.events)), before: make([]int, len(eps.events)), share: make([]float64, folds)}
	for e, evs := range eps.events {
		i := slices.Index(hazard.holds[eps.first[e]:eps.first[e]+len(evs)], true)
		p.unsafe[e], p.before[e] = i >= 0, i
		if i < 0 {
			p.before[e] = len(evs)
		}
	}
	for f := range folds {
		var safe, all int
		for e := range eps.events {
			if e%folds == f {
				continue
			}
			all += p.before[e]
			if !p.unsafe[e] {
				safe += p.before[e]
			}
		}
		p.share[f] = 0.5
		if all > 0 {
			p.share[f] = float64(safe) / float64(all)
		}
	}
	return p
}

// cvScores are an abstraction's scores on the held-out folds.
type cvScores struct {
	// auc: of every unsafe and safe held-out episode, the chance that the
	// unsafe one's lowest P_safe before the hazard is below the safe one's
	// lowest (ties half). A warning comes where P_safe drops below θ, so
	// this is the area under the front of warned against false alarms that
	// θ sweeps.
	auc float64
	// area: the same area over the front's last stretch, from warning
	// minWarned of the unsafe episodes to warning them all (topArea): what
	// the choice maximises.
	area float64
	// brier: P_safe at every event before the hazard against whether the
	// episode stayed safe (the training share where the model never saw the
	// state); base: predicting the training share at every event. The same
	// predictions for every abstraction, so they compare.
	brier, base float64
	predictions int
	// lowest: per held-out episode, in the same order for every
	// abstraction, its lowest P_safe before the hazard.
	lowest []episodeScore
}

// crossValidate learns preds' chain on all folds but one and scores the
// held-out one, for each fold.
func (a *abstraction) crossValidate(eps episodeSet, preds []atom) (cvScores, error) {
	var sc cvScores
	var sum, sumBase float64
	lowest := make([]episodeScore, 0, len(eps.events))
	states := eps.states(preds)
	byFold, err := eps.foldCounts(states, a.plan.folds)
	if err != nil {
		return sc, err
	}
	for f := range a.plan.folds {
		train := dtmc.NewCounts()
		for k, c := range byFold {
			if k != f {
				train.Merge(c)
			}
		}
		g, err := a.guardOf(preds, train)
		if err != nil {
			return sc, err
		}
		share := a.plan.share[f]
		for e := f; e < len(eps.events); e += a.plan.folds {
			outcome := 1.0
			if a.plan.unsafe[e] {
				outcome = 0
			}
			low, sqErr := 1.0, 0.0
			for _, s := range eps.episode(states, e)[:a.plan.before[e]] {
				p := share
				if i, ok := g.Model().Index(s); ok && g.Seen(i) {
					p = g.Safety().PSafe(i)
				}
				low = min(low, p)
				sqErr += (p - outcome) * (p - outcome)
				sumBase += (share - outcome) * (share - outcome)
				sc.predictions++
			}
			sum += sqErr
			lowest = append(lowest, episodeScore{low, a.plan.unsafe[e], sqErr})
		}
	}
	if sc.predictions == 0 {
		return sc, errors.New("no event before the hazard in any episode: nothing to predict")
	}
	sc.brier, sc.base, sc.lowest = sum/float64(sc.predictions), sumBase/float64(sc.predictions), lowest
	sc.auc, sc.area = topArea(lowest, 0), topArea(lowest, a.minWarned)
	return sc, nil
}

// episodeScore is an episode's lowest P_safe before the hazard, and
// whether it went unsafe.
type episodeScore struct {
	low    float64
	unsafe bool
	sqErr  float64 // the sum of the squared errors of its predictions
}

// warningCosts are, per unsafe episode, the share of the safe episodes
// that a θ warning it warns too: those whose lowest P_safe is below its
// lowest, ties half. One minus their mean is the area under the front.
func warningCosts(scores []episodeScore) []float64 {
	var safe []float64
	for _, s := range scores {
		if !s.unsafe {
			safe = append(safe, s.low)
		}
	}
	slices.Sort(safe)
	var costs []float64
	for _, s := range scores {
		if !s.unsafe {
			continue
		}
		below, _ := slices.BinarySearch(safe, s.low)
		tied := 0
		for below+tied < len(safe) && safe[below+tied] == s.low {
			tied++
		}
		costs = append(costs, (float64(below)+float64(tied)/2)/float64(len(safe)))
	}
	return costs
}

// topArea is the area under the front of warned against false alarms
// over its last stretch, from warning minWarned of the unsafe episodes to
// warning them all, as a share of that stretch's whole: one minus the mean
// warning cost of the hardest (1 - minWarned) of the unsafe episodes. With
// minWarned 0 it is the whole front's area, the chance that an unsafe
// episode's score is below a safe one's (ties half); 0.5 without both
// kinds of episodes.
//
// A monitor is run to warn nearly every unsafe episode: what matters is
// the false alarms at the front's last points, which the hardest unsafe
// episodes decide and the whole area averages away.
func topArea(scores []episodeScore, minWarned float64) float64 {
	costs := warningCosts(scores)
	if len(costs) == 0 || len(costs) == len(scores) {
		return 0.5
	}
	slices.SortFunc(costs, func(x, y float64) int { return cmp.Compare(y, x) })
	k := max(1, int(math.Ceil((1-minWarned)*float64(len(costs))-1e-9)))
	var sum float64
	for _, c := range costs[:k] {
		sum += c
	}
	return 1 - sum/float64(k)
}

// gainSE is the standard error of the difference between the top areas
// of two scorings of the same episodes, by the bootstrap over episodes (a
// fixed seed: the choice is the same at every run). Cross-validated areas
// differ by chance too: an atom that adds less than its noise is left out.
func gainSE(x, y []episodeScore, minWarned float64) float64 {
	const resamples = 200
	rng := rand.New(rand.NewPCG(1, 2))
	rx, ry := make([]episodeScore, len(x)), make([]episodeScore, len(y))
	diffs := make([]float64, resamples)
	for b := range diffs {
		for i := range rx {
			j := rng.IntN(len(x))
			rx[i], ry[i] = x[j], y[j]
		}
		diffs[b] = topArea(ry, minWarned) - topArea(rx, minWarned)
	}
	return math.Sqrt(variance(diffs))
}

// brierGainSE is the standard error of the difference between the Brier
// scores of two scorings of the same episodes over n predictions: the
// episodes are independent, their events are not.
func brierGainSE(x, y []episodeScore, n int) float64 {
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i].sqErr - y[i].sqErr
	}
	return math.Sqrt(variance(d)*float64(len(d))) / float64(n)
}

// variance is the sample variance.
func variance(xs []float64) float64 {
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return ss / float64(len(xs)-1)
}
