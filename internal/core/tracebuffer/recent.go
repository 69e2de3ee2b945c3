package tracebuffer

import "go.opentelemetry.io/collector/pdata/pcommon"

// recentIDs remembers the last n released trace IDs: a span of one of them is
// late and passes through; older ones are forgotten, so memory stays bounded.
type recentIDs struct {
	ring []pcommon.TraceID
	next int
	full bool
	set  map[pcommon.TraceID]int // ID -> times it is in the ring
}

func newRecentIDs(n int) recentIDs {
	return recentIDs{ring: make([]pcommon.TraceID, max(n, 1)), set: map[pcommon.TraceID]int{}}
}

func (r *recentIDs) has(id pcommon.TraceID) bool { return r.set[id] > 0 }

func (r *recentIDs) add(id pcommon.TraceID) {
	if r.full {
		old := r.ring[r.next]
		if r.set[old]--; r.set[old] == 0 {
			delete(r.set, old)
		}
	}
	r.ring[r.next] = id
	r.set[id]++
	r.next++
	if r.next == len(r.ring) {
		r.next, r.full = 0, true
	}
}
