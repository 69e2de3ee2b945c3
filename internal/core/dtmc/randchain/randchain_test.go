// SPDX-License-Identifier: Apache-2.0

package randchain

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every row is a distribution over sorted, distinct successors; the lazy
// chain is the plain one halved with a self-loop of 1/2, drawn from the
// same seed.
func TestRows(t *testing.T) {
	const n, deg = 200, 8
	plain := slices.Collect(Rows(rand.New(rand.NewPCG(1, 2)), n, deg, 0.05, false))
	lazy := slices.Collect(Rows(rand.New(rand.NewPCG(1, 2)), n, deg, 0.05, true))
	if len(plain) != n+2 || len(lazy) != n+2 {
		t.Fatalf("%d and %d rows, want %d", len(plain), len(lazy), n+2)
	}
	for s, r := range plain {
		sum := 0.0
		for i, p := range r.Prob {
			sum += p
			if p <= 0 || (i > 0 && r.To[i] <= r.To[i-1]) {
				t.Fatalf("row %d: %v %v", s, r.To, r.Prob)
			}
		}
		if math.Abs(sum-1) > 1e-12 || len(r.To) > deg {
			t.Fatalf("row %d sums to %v over %d successors", s, sum, len(r.To))
		}
		if s >= n {
			if !slices.Equal(r.To, []int32{int32(s)}) {
				t.Fatalf("absorbing row %d: %v", s, r.To)
			}
			continue
		}
		self := 0.0
		if i := slices.Index(r.To, int32(s)); i >= 0 {
			self = r.Prob[i]
		}
		if j := slices.Index(lazy[s].To, int32(s)); j < 0 || math.Abs(lazy[s].Prob[j]-(0.5+self/2)) > 1e-15 {
			t.Fatalf("lazy row %d: %v %v", s, lazy[s].To, lazy[s].Prob)
		}
	}
}

// A consumer that stops early stops the draw.
func TestRowsStopEarly(t *testing.T) {
	seen := 0
	for range Rows(rand.New(rand.NewPCG(1, 1)), 50, 4, 0.1, false) {
		seen++
		if seen == 3 {
			break
		}
	}
	if seen != 3 {
		t.Fatal(seen)
	}
}

// The grid's rows sum to exactly 1, its cells number row by row, and its
// columns are the gambler's walk: every cell's moves to the left and to the
// right are equal.
func TestGrid(t *testing.T) {
	const w = 5
	rows := slices.Collect(Grid(w))
	if len(rows) != w*w+2 {
		t.Fatalf("%d rows, want %d", len(rows), w*w+2)
	}
	for s, r := range rows {
		sum := 0.0
		for i, p := range r.Prob {
			sum += p
			if p <= 0 || (i > 0 && r.To[i] <= r.To[i-1]) {
				t.Fatalf("row %d: %v %v", s, r.To, r.Prob)
			}
		}
		if sum != 1 {
			t.Fatalf("row %d sums to %.17g", s, sum)
		}
	}
	// Cell (1, 1) is state 1: left to the sink, right to state 2, down to
	// state 1+w, up off the edge (stays).
	if r := rows[1]; !slices.Equal(r.To, []int32{0, 1, 2, 1 + w}) || r.Prob[1] != 1-3*GridMove {
		t.Errorf("cell (1, 1): %v %v", r.To, r.Prob)
	}
	// Cell (w, 3), state 3w: right to the target.
	if r := rows[3*w]; !slices.Contains(r.To, w*w+1) || r.Prob[slices.Index(r.To, int32(3*w))] != 1-4*GridMove {
		t.Errorf("cell (w, 3): %v %v", r.To, r.Prob)
	}
}
