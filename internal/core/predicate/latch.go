// SPDX-License-Identifier: Apache-2.0

package predicate

import "fmt"

// latchOp is one latched predicate (or a latch nested in one): it reads the
// signal bits set and reset and writes its value on bit out.
type latchOp struct {
	set, reset, out uint
}

// Latch holds the state of a Set's latched predicates for one group (one
// trace, or one conversation): a latch holds from an event where its set
// condition holds until an event where its reset condition holds, and at an
// event where both hold it holds (set wins). The caller makes one per group
// and steps it through the group's events in order; it is a value, cheap to
// keep per group, and not safe for concurrent use.
type Latch struct {
	ops     []latchOp
	outMask uint64
	state   uint64 // bit k: latch ops[k] holds
}

// NewLatch returns a group's latches, all released.
func (s *Set) NewLatch() Latch {
	return Latch{ops: s.latches, outMask: s.outMask}
}

// Step advances the latches by one event and returns the predicates' Bits
// there. Without latched predicates it only masks the signals.
func (l *Latch) Step(sig Signals) Bits {
	w := uint64(sig)
	for k, op := range l.ops {
		held := l.state>>uint(k)&1 == 1
		on := w>>op.set&1 == 1 || (held && w>>op.reset&1 == 0)
		l.state &^= 1 << uint(k)
		w &^= 1 << op.out
		if on {
			l.state |= 1 << uint(k)
			w |= 1 << op.out
		}
	}
	return Bits(w & l.outMask)
}

// Reset releases every latch, as at the start of a new sequence.
func (l *Latch) Reset() { l.state = 0 }

// State is which latches hold, for a checkpoint.
func (l *Latch) State() uint64 { return l.state }

// Restore sets which latches hold, as State returned it; bits of latches
// this configuration does not have are refused.
func (l *Latch) Restore(state uint64) error {
	if n := len(l.ops); n < 64 && state>>uint(n) != 0 {
		return fmt.Errorf("latch state %#x: only %d latched predicates are configured", state, n)
	}
	l.state = state
	return nil
}
