// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Gamma draws have the shape's mean and variance, below 1 and above.
func TestGammaMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, shape := range []float64{0.3, 1, 2.5, 40} {
		const n = 200000
		var sum, sq float64
		for range n {
			g := gamma(r, shape)
			sum += g
			sq += g * g
		}
		mean := sum / n
		variance := sq/n - mean*mean
		if math.Abs(mean-shape) > 0.02*shape+0.01 || math.Abs(variance-shape) > 0.05*shape+0.01 {
			t.Errorf("Gamma(%v): mean %.4f, variance %.4f, want both %v", shape, mean, variance, shape)
		}
	}
}

// oneStep is a chain of one predicate x (unsafe): from 00 a run reaches x
// with probability q, else ends. traces runs of it are counted.
func oneStep(t *testing.T, r *rand.Rand, q float64, traces int, smoothing Smoothing) *Model {
	c := NewCounts()
	for range traces {
		run := []State{0}
		if r.Float64() < q {
			run = append(run, 1)
		}
		if err := c.AddTrace(run); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Learn(Spec{Predicates: []string{"x"}, Unsafe: "x", Smoothing: smoothing}, c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The intervals are calibrated: over many data sets drawn from a known
// chain, the 90 % interval of the start state's P_safe holds the true value
// about 90 % of the time (frequency estimation, whose posterior is the
// Beta of the counts).
func TestIntervalsCoverTheTrueValue(t *testing.T) {
	sv, err := NewSolver(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	const q, reps = 0.2, 200
	covered := 0
	for rep := range reps {
		m := oneStep(t, r, q, 40, Smoothing{Mode: Frequency})
		iv, err := m.PSafeIntervals(Property{Kind: AlwaysSafe, Unsafe: "x"}, sv, PosteriorOptions{Samples: 200, Seed: uint64(rep)})
		if err != nil {
			t.Fatal(err)
		}
		if i, _ := m.Index(0); iv[i].Low <= 1-q && 1-q <= iv[i].High {
			covered++
		}
	}
	share := float64(covered) / reps
	if share < 0.84 || share > 0.96 {
		t.Errorf("the 90%% interval held the true P_safe in %.0f%% of %d data sets", 100*share, reps)
	}
	t.Logf("the 90%% interval held the true P_safe in %.1f%% of %d data sets", 100*share, reps)
}

// More traces, a narrower interval; the model's own estimate lies inside;
// VisitsToSettle says 0 for an interval clear of θ and a positive number
// for one that holds it.
func TestIntervalsNarrowWithData(t *testing.T) {
	sv, err := NewSolver(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	prop := Property{Kind: AlwaysSafe, Unsafe: "x"}
	var widths []float64
	for _, traces := range []int{10, 100, 1000} {
		m := oneStep(t, r, 0.3, traces, Smoothing{})
		iv, err := m.PSafeIntervals(prop, sv, PosteriorOptions{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		sf, err := m.Solve(prop, sv)
		if err != nil {
			t.Fatal(err)
		}
		i, _ := m.Index(0)
		if est := sf.PSafe(i); est < iv[i].Low || est > iv[i].High {
			t.Errorf("%d traces: the estimate %.3f is outside [%.3f, %.3f]", traces, est, iv[i].Low, iv[i].High)
		}
		widths = append(widths, iv[i].High-iv[i].Low)
		if n := VisitsToSettle(iv[i], iv[i].Low-0.01, m.Visits(i)); n != 0 {
			t.Errorf("%d traces: θ below the interval needs %d more visits, want 0", traces, n)
		}
		if n := VisitsToSettle(iv[i], iv[i].Low+0.25*(iv[i].High-iv[i].Low), m.Visits(i)); n <= 0 {
			t.Errorf("%d traces: θ inside the interval needs %d more visits", traces, n)
		}
	}
	if !(widths[0] > widths[1] && widths[1] > widths[2]) {
		t.Errorf("interval widths %v do not narrow with 10, 100, 1000 traces", widths)
	}
	if _, err := oneStep(t, r, 0.3, 10, Smoothing{}).PSafeIntervals(prop, sv, PosteriorOptions{Level: 1}); err == nil {
		t.Error("a level of 1 was accepted")
	}
}
