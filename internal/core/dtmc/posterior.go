// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// How uncertain is each state's P_safe after the traces counted? Each
// learned row's probabilities have a Dirichlet posterior: under Laplace
// smoothing with α, Dirichlet(n_st + α) over the state's valid successors
// (the smoothed row is its mean); under frequency estimation,
// Dirichlet(n_st) over the successors seen. Rows are independent given the
// counts, so a draw of every row is a draw of the chain; P_safe solved on
// each of many draws gives, per state, the posterior of its P_safe, whose
// quantiles are a credible interval. Sampling rather than interval
// iteration: the property's own solver runs unchanged on each draw, for
// every property kind.

// Interval is a credible interval of a state's P_safe.
type Interval struct {
	Low, High float64
}

// Straddles reports whether the interval holds θ: the data do not yet say
// on which side of the threshold the state is.
func (iv Interval) Straddles(theta float64) bool { return iv.Low < theta && theta <= iv.High }

// PosteriorOptions say how intervals are estimated.
type PosteriorOptions struct {
	// Samples is the number of chains drawn (default 400).
	Samples int
	// Level is the interval's probability (default 0.9: from the 5 % to
	// the 95 % quantile).
	Level float64
	// Seed makes the draws repeatable.
	Seed uint64
}

// Validate checks the options; zero Samples (no intervals) is valid.
func (o PosteriorOptions) Validate() error {
	if o.Samples == 0 {
		return nil
	}
	_, err := o.withDefaults()
	return err
}

func (o PosteriorOptions) withDefaults() (PosteriorOptions, error) {
	if o.Samples == 0 {
		o.Samples = 400
	}
	if o.Level == 0 {
		o.Level = 0.9
	}
	if o.Samples < 10 || o.Samples > 100000 {
		return o, fmt.Errorf("samples %d: want 10 to 100000", o.Samples)
	}
	if !(o.Level > 0 && o.Level < 1) {
		return o, fmt.Errorf("level %v: want a probability strictly between 0 and 1", o.Level)
	}
	return o, nil
}

// PSafeIntervals solves p on o.Samples chains drawn from the posterior and
// returns each state's credible interval of P_safe.
func (m *Model) PSafeIntervals(p Property, sv *Solver, o PosteriorOptions) ([]Interval, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	draws := make([][]float64, len(m.states))
	for range o.Samples {
		c, err := m.drawChain(r)
		if err != nil {
			return nil, err
		}
		drawn := *m
		drawn.chain = c
		sf, err := drawn.Solve(p, sv)
		if err != nil {
			return nil, err
		}
		for i := range m.states {
			draws[i] = append(draws[i], sf.PSafe(i))
		}
	}
	out := make([]Interval, len(m.states))
	tail := (1 - o.Level) / 2
	for i, d := range draws {
		slices.Sort(d)
		out[i] = Interval{Low: quantile(d, tail), High: quantile(d, 1-tail)}
	}
	return out, nil
}

// quantile is the q-quantile of sorted values, interpolated.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

// drawChain draws every learned row from its posterior; fixed rows (End,
// absorbing states, frequency rows never left) stay as they are.
func (m *Model) drawChain(r *rand.Rand) (*Chain, error) {
	rows := make([][]Transition, len(m.states))
	for i, s := range m.states {
		cols, probs := m.chain.Row(i)
		rows[i] = make([]Transition, len(cols))
		if m.fixed[i] || m.visits[i] == 0 && m.spec.Smoothing.Mode == Frequency {
			for k := range cols {
				rows[i][k] = Transition{int(cols[k]), probs[k]}
			}
			continue
		}
		total := 0.0
		for k, j := range cols {
			shape := float64(m.counts.Pair(s, m.states[j]))
			if m.spec.Smoothing.Mode == Laplace {
				shape += m.spec.Smoothing.Alpha
			}
			g := gamma(r, shape)
			rows[i][k] = Transition{int(j), g}
			total += g
		}
		if !(total > 0) {
			return nil, errors.New("a posterior draw of a row summed to zero")
		}
		for k := range rows[i] {
			rows[i][k].Prob /= total
		}
	}
	return FromRows(rows)
}

// gamma draws from Gamma(shape, 1): Marsaglia and Tsang's method, with the
// boost U^(1/a) for a shape below 1.
func gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// VisitsToSettle is about how many more visits of a state would make its
// interval clear θ, assuming its width shrinks as one over the square root
// of the visits (n, so far); -1 when the interval is centred on θ (no
// number of visits can be estimated), 0 when it does not hold θ.
func VisitsToSettle(iv Interval, theta float64, n uint64) int64 {
	if !iv.Straddles(theta) {
		return 0
	}
	half, mid := (iv.High-iv.Low)/2, (iv.High+iv.Low)/2
	d := math.Abs(mid - theta)
	if d < 1e-9 {
		return -1
	}
	base := float64(max(n, 1))
	need := base * (half / d) * (half / d)
	return int64(math.Ceil(need - base))
}
