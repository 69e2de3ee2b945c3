// SPDX-License-Identifier: Apache-2.0

package tracebuffer

import (
	"time"

	"github.com/agentguard/agentguard/internal/room"
)

// deadline is when a trace falls due, as of one arrival.
type deadline struct {
	at    time.Time
	trace *Trace
	stamp time.Time // the trace's last arrival when queued: a later one makes this entry stale
}

// fifo holds deadlines in the order they were set. Each queue adds a
// constant (Wait, or RootWait) to the clock's now, so with a clock that does
// not go backwards that order is due order: Expire pops the due head in
// O(released), instead of scanning every trace held. A trace that grows
// again leaves a stale entry behind, dropped when it comes due; entries live
// at most one wait, so a queue holds at most the arrivals of one wait.
type fifo struct {
	q    []deadline
	head int
}

func (f *fifo) push(d deadline) { f.q = append(f.q, d) }

// popDue calls fn for each entry due at now, in order, and drops them.
func (f *fifo) popDue(now time.Time, fn func(deadline)) {
	for f.head < len(f.q) && !f.q[f.head].at.After(now) {
		d := f.q[f.head]
		f.q[f.head] = deadline{} // let the trace go
		f.head++
		fn(d)
	}
	if f.head > len(f.q)/2 { // reuse the front half once it is mostly spent
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:])
		f.q, f.head = f.q[:n], 0
	}
	f.shrink()
}

// shrink lets go of the room a burst needed (room.Spare): a queue keeps
// room for one wait's arrivals.
func (f *fifo) shrink() {
	if !room.Spare(f.len(), cap(f.q)) {
		return
	}
	q := make([]deadline, f.len(), room.Size(f.len()))
	copy(q, f.q[f.head:])
	f.q, f.head = q, 0
}

func (f *fifo) reset() {
	clear(f.q)
	f.q, f.head = f.q[:0], 0
}

func (f *fifo) len() int { return len(f.q) - f.head }
