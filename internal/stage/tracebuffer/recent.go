// SPDX-License-Identifier: Apache-2.0

package tracebuffer

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// recentIDs remembers the last n released trace IDs, each with the group
// its owner filed it under: a span of one of them is late, and its group is
// known without the attribute that gave it; older ones are forgotten, so
// memory stays bounded. The ring grows as IDs come, up to n: n is sized for
// the busiest collector (max_traces), and most never release that many.
type recentIDs struct {
	ring  []pcommon.TraceID
	limit int // n
	next  int // where the next ID goes once the ring is full
	full  bool
	set   map[pcommon.TraceID]remembered
}

type remembered struct {
	group string // the group of its latest release
	times int32  // how often the ID is in the ring (at most its length, n)
	taken bool   // its owner took it (Take) rather than it being due or forced out
}

func newRecentIDs(n int) recentIDs {
	return recentIDs{limit: min(max(n, 1), math.MaxInt32), set: map[pcommon.TraceID]remembered{}}
}

func (r *recentIDs) has(id pcommon.TraceID) bool { return r.set[id].times > 0 }

func (r *recentIDs) add(id pcommon.TraceID) {
	e := r.set[id] // read first: the slot overwritten may be id's own, and its group must stay
	if r.full {
		switch old := r.ring[r.next]; {
		case old == id:
			e.times--
		case r.set[old].times == 1:
			delete(r.set, old)
		default:
			o := r.set[old]
			o.times--
			r.set[old] = o
		}
	}
	e.times++
	r.set[id] = e
	if !r.full {
		r.ring = append(r.ring, id)
		r.full = len(r.ring) == r.limit
		return
	}
	r.ring[r.next] = id
	if r.next++; r.next == len(r.ring) {
		r.next = 0
	}
}

func (r *recentIDs) file(id pcommon.TraceID, group string) {
	if e, ok := r.set[id]; ok {
		e.group = group
		r.set[id] = e
	}
}

// setTaken records whether id's latest release was its owner's Take.
func (r *recentIDs) setTaken(id pcommon.TraceID, taken bool) {
	if e, ok := r.set[id]; ok {
		e.taken = taken
		r.set[id] = e
	}
}

func (r *recentIDs) taken(id pcommon.TraceID) bool { return r.set[id].taken }

func (r *recentIDs) group(id pcommon.TraceID) (string, bool) {
	e, ok := r.set[id]
	return e.group, ok
}
