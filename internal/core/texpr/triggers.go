// SPDX-License-Identifier: Apache-2.0

package texpr

// Triggering: which events can start anything in an evaluation.
//
// An evaluation of X started at an event is UNTRIGGERED there when it is
// decided by that event alone whatever the event's predicates other than a
// few say: it terminates at that very event with a fixed number of matches,
// its idle outcome. For `a >> b` the idle outcome is the vacuous match, for
// `a + b` a failure, for `~(a + b)` a match. An assertion is TRIGGERED at an
// event where its evaluation is not untriggered: where a predicate of the
// expression's FIRST set holds, or at every event when the expression can
// outlive its start event whatever that event holds.
//
// FIRST, with any (every event triggers) and idle (the matches of an
// untriggered evaluation), by operator (spec §2):
//
//	p          {p}; idle 0. ok: {} and idle 1, a constant: ok never triggers.
//	a + b      FIRST(a) if idle(a) = 0 (then idle 0); else any: b waits for the next event.
//	a >> b     FIRST(a) if idle(a) = 0 (then idle 1, the vacuous match); else any.
//	a / b      FIRST(a) if idle(a) = 0 (then idle 0); else FIRST(a) ∪ FIRST(b),
//	           idle(a)·idle(b): b starts at the same event.
//	a | b      FIRST(a) ∪ FIRST(b); idle(a) + idle(b).
//	a & b      FIRST(a) ∪ FIRST(b): a pair lives while either side does; idle 1 if both idle > 0.
//	a ^ b      FIRST(a) ∪ FIRST(b); idle(a)·idle(b).
//	a * (n,m)  m = 0: {} and idle 1 (the empty match alone). Else FIRST(a), and
//	           idle(a) = 0: idle [n = 0]; idle(a) > 0 and m = 1: idle [n = 0] + idle(a);
//	           idle(a) > 0 and m > 1: any, the next iteration waits for the next event.
//	~a         FIRST(a); idle 1 if idle(a) = 0, else 0.
//	first(a), once(a)  FIRST(a); idle min(idle(a), 1).
//
// So negation does not widen FIRST (`~(a + b)` triggers where a holds), and
// ok or an empty-matching left side in front of + or >> makes it every event
// (`ok + a`, `a * (0,1) + b`), as does a repeat of a nullable body.

// Triggers returns the FIRST set of e as a mask of predicate bits, and any:
// true when every event triggers e. An evaluation started at an event whose
// bits miss mask, when !any, terminates at that event with the same outcome
// whatever else the event holds. Compute it once per expression; testing an
// event is then bits&mask != 0 || any, without allocating.
func Triggers(e *Expr) (mask uint64, any bool) {
	t := firstOf(e)
	return t.mask, t.any
}

// first is FIRST with what an untriggered evaluation does.
type first struct {
	mask uint64
	any  bool
	idle uint64 // matches of an untriggered evaluation, all at its start event
}

func firstOf(e *Expr) first {
	switch e.Op {
	case OpPred:
		if e.Index < 0 {
			return first{idle: 1}
		}
		return first{mask: 1 << uint(e.Index)}
	case OpConcat, OpCond:
		a := firstOf(e.L)
		if a.any || a.idle > 0 {
			return first{mask: a.mask, any: true}
		}
		if e.Op == OpCond {
			a.idle = 1
		}
		return a
	case OpFusion:
		a := firstOf(e.L)
		if a.any || a.idle == 0 {
			return a
		}
		b := firstOf(e.R)
		return first{mask: a.mask | b.mask, any: b.any, idle: mulSat(a.idle, b.idle)}
	case OpAlt, OpAnd, OpIsect:
		a, b := firstOf(e.L), firstOf(e.R)
		t := first{mask: a.mask | b.mask, any: a.any || b.any}
		switch e.Op {
		case OpAlt:
			t.idle = addSat(a.idle, b.idle)
		case OpAnd:
			if a.idle > 0 && b.idle > 0 {
				t.idle = 1
			}
		default:
			t.idle = mulSat(a.idle, b.idle)
		}
		return t
	case OpRepeat:
		if e.Max == 0 {
			return first{idle: 1}
		}
		a := firstOf(e.L)
		empty := uint64(0)
		if e.Min == 0 {
			empty = 1
		}
		switch {
		case a.any:
			return a
		case a.idle == 0:
			return first{mask: a.mask, idle: empty}
		case e.Max == 1:
			return first{mask: a.mask, idle: addSat(empty, a.idle)}
		}
		return first{mask: a.mask, any: true}
	case OpFirst, OpOnce:
		a := firstOf(e.L)
		a.idle = min(a.idle, 1)
		return a
	case OpNot:
		a := firstOf(e.L)
		if a.any {
			return a
		}
		if a.idle == 0 {
			return first{mask: a.mask, idle: 1}
		}
		return first{mask: a.mask}
	}
	panic("texpr: unknown operator")
}
