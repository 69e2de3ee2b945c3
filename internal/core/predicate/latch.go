// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

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
//
// It holds the group's meters too (meter.go): a Latch with meters is not a
// plain value, and a copy that must not change the group is made by Clone.
type Latch struct {
	plan   *latchPlan   // the Set's, shared: a group keeps only its state
	state  uint64       // bit k: latch plan.ops[k] holds
	meters *meterStates // nil without meters
}

// latchPlan is what the latches and meters of a Set are, for every group.
type latchPlan struct {
	ops     []latchOp // in evaluation order: nested latches first
	outMask uint64    // the predicates' bits
	meters  []meterOp // budgets, repeats, no_progress (meter.go)
}

// NewLatch returns a group's latches, all released, and its meters, at zero.
func (s *Set) NewLatch() Latch {
	l := Latch{plan: &s.plan}
	if len(s.plan.meters) > 0 {
		l.meters = newMeterStates(len(s.plan.meters))
	}
	return l
}

// Clone is a copy whose steps leave l as it was.
func (l Latch) Clone() Latch {
	l.meters = l.meters.clone()
	return l
}

// StepEvent is Step with the meters: m is what they read at the event's
// span (nil: nothing), and where one holds the span is told why
// (MeterNoteAttribute). A silent event (a span that is no event, kept for
// the meters) advances only the meters.
func (l *Latch) StepEvent(sig Signals, m *Measurement, span ptrace.Span, silent bool) Bits {
	var bits Bits
	if !silent {
		bits = l.Step(sig)
	}
	if l.meters != nil {
		bits |= Bits(l.meters.step(l.plan.meters, m, span))
	}
	return bits
}

// MeterBits are the bits of the meter predicates: a silent event stays an
// event only where one of them holds.
func (s *Set) MeterBits() uint64 {
	var mask uint64
	for _, op := range s.plan.meters {
		mask |= 1 << op.out
	}
	return mask
}

// Step advances the latches by one event and returns the predicates' Bits
// there. Without latched predicates it only masks the signals.
func (l *Latch) Step(sig Signals) Bits {
	w := uint64(sig)
	for k, op := range l.plan.ops {
		held := l.state>>uint(k)&1 == 1
		on := w>>op.set&1 == 1 || (held && w>>op.reset&1 == 0)
		l.state &^= 1 << uint(k)
		w &^= 1 << op.out
		if on {
			l.state |= 1 << uint(k)
			w |= 1 << op.out
		}
	}
	return Bits(w & l.plan.outMask)
}

// Reset releases every latch and zeroes the meters, as at the start of a
// new sequence.
func (l *Latch) Reset() {
	l.state = 0
	if l.meters != nil {
		l.meters = newMeterStates(len(l.plan.meters))
	}
}

// AppendMeters appends the meters' state for a checkpoint (nothing without
// meters).
func (l *Latch) AppendMeters(b []byte) []byte {
	if l.meters == nil {
		return b
	}
	return l.meters.appendTo(b)
}

// RestoreMeters sets the meters' state, as AppendMeters wrote it; empty
// data is meters at zero (a checkpoint written before meters existed).
func (l *Latch) RestoreMeters(data []byte) error {
	switch {
	case l.meters == nil && len(data) > 0:
		return fmt.Errorf("meter state of %d bytes: no meters are configured", len(data))
	case l.meters == nil, len(data) == 0:
		return nil
	}
	return l.meters.restore(l.plan.meters, data)
}

// State is which latches hold, for a checkpoint.
func (l *Latch) State() uint64 { return l.state }

// Restore sets which latches hold, as State returned it; bits of latches
// this configuration does not have are refused.
func (l *Latch) Restore(state uint64) error {
	if n := len(l.plan.ops); n < 64 && state>>uint(n) != 0 {
		return fmt.Errorf("latch state %#x: only %d latched predicates are configured", state, n)
	}
	l.state = state
	return nil
}
