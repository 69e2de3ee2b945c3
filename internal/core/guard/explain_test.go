// SPDX-License-Identifier: Apache-2.0

package guard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Explanations print probabilities as "%.4g" did when they were written with
// fmt: the same text for every kind of value.
func TestAppendProbPrintsAsPercentPoint4g(t *testing.T) {
	values := []float64{0, 1, 0.5, 0.965, 0.96549, 1e-5, 1.23456e-7, 0.99995, 0.999951, 123456, math.SmallestNonzeroFloat64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		values = append(values, rng.Float64(), math.Pow(10, -rng.Float64()*12)*rng.Float64())
	}
	for _, p := range values {
		if got, want := string(appendProb(nil, p)), fmt.Sprintf("%.4g", p); got != want {
			t.Fatalf("appendProb(%v) = %q, fmt gives %q", p, got, want)
		}
	}
}
