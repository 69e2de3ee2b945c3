// SPDX-License-Identifier: Apache-2.0

package tracebuffer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentguard/agentguard/internal/room"
)

// The queue pops exactly the due entries, in order, through bursts and
// quiet spells, and lets go of a burst's room once it has drained.
func TestFifoPopsInOrderAndShrinksAfterABurst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var f fifo
	t0 := time.Unix(0, 0)
	pushed, popped := 0, 0
	for round := range 200 {
		burst := rng.IntN(20)
		if round%50 == 0 {
			burst = 10_000
		}
		for range burst {
			f.push(deadline{at: t0.Add(time.Duration(pushed))})
			pushed++
		}
		due := popped + rng.IntN(f.len()+1)
		f.popDue(t0.Add(time.Duration(due-1)), func(d deadline) {
			if want := t0.Add(time.Duration(popped)); !d.at.Equal(want) {
				t.Fatalf("round %d: popped %v, want %v", round, d.at, want)
			}
			popped++
		})
		if popped != due {
			t.Fatalf("round %d: %d popped, want %d", round, popped, due)
		}
		if c := cap(f.q); c > room.Min && 4*f.len() < c {
			t.Fatalf("round %d: %d held in room for %d", round, f.len(), c)
		}
	}
	f.popDue(t0.Add(time.Duration(pushed)), func(deadline) { popped++ })
	if popped != pushed || cap(f.q) > room.Min {
		t.Errorf("drained: %d of %d popped, room for %d left", popped, pushed, cap(f.q))
	}
}
