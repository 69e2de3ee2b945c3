// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"time"

	"github.com/agentguard/agentguard/internal/room"
)

// Recent holds open groups in the order of their last activity, so that the
// idle ones and, past a bound, the least recently active are found without
// scanning every group: at a high rate of groups (one a trace) a scan per
// eviction would be quadratic. The order is a list threaded through the
// entries themselves (no container/list element and no interface box per
// group: an open group's bookkeeping is one map slot and one entry). It is
// not safe for concurrent use.
type Recent[T any] struct {
	oldest, newest *entry[T]
	byKey          map[string]*entry[T]
	peak           int // the most groups byKey held since it was made (room.Map): groups that all went dormant, or a burst that ended, give their room back
	// free holds entries removed, for the next groups (up to maxFree): a
	// group a trace, kept after its end and forgotten later, would
	// otherwise cost an allocation at each step.
	free  *entry[T]
	nfree int
}

// maxFree bounds the entries a Recent keeps for reuse.
const maxFree = 256

type entry[T any] struct {
	key          string
	seen         int64 // unix nanoseconds
	value        T
	older, newer *entry[T]
}

// NewRecent returns an empty set.
func NewRecent[T any]() *Recent[T] {
	return &Recent[T]{byKey: map[string]*entry[T]{}}
}

// Touch returns the group's value, made by create if the group is new, and
// marks it active at now.
func (r *Recent[T]) Touch(key string, now time.Time, create func() T) T {
	e, ok := r.byKey[key]
	if ok {
		r.unlink(e)
	} else {
		e = r.newEntry(key, create())
		r.byKey[key] = e
		r.peak = max(r.peak, len(r.byKey))
	}
	e.seen = now.UnixNano()
	r.append(e)
	return e.value
}

// Get returns a group's value without marking it active.
func (r *Recent[T]) Get(key string) (T, bool) {
	if e, ok := r.byKey[key]; ok {
		return e.value, true
	}
	var zero T
	return zero, false
}

// Seen is when group key was last active, in unix nanoseconds.
func (r *Recent[T]) Seen(key string) (int64, bool) {
	e, ok := r.byKey[key]
	if !ok {
		return 0, false
	}
	return e.seen, true
}

// Len is the number of open groups.
func (r *Recent[T]) Len() int { return len(r.byKey) }

// Oldest is the least recently active group, "" when there is none.
func (r *Recent[T]) Oldest() string {
	if r.oldest == nil {
		return ""
	}
	return r.oldest.key
}

// Remove drops a group and returns its value.
func (r *Recent[T]) Remove(key string) (T, bool) {
	e, ok := r.byKey[key]
	if !ok {
		var zero T
		return zero, false
	}
	delete(r.byKey, key)
	r.byKey = room.Map(r.byKey, &r.peak)
	r.unlink(e)
	v := e.value
	r.recycle(e)
	return v, true
}

func (r *Recent[T]) newEntry(key string, value T) *entry[T] {
	e := r.free
	if e == nil {
		return &entry[T]{key: key, value: value}
	}
	r.free, r.nfree = e.newer, r.nfree-1
	*e = entry[T]{key: key, value: value}
	return e
}

func (r *Recent[T]) recycle(e *entry[T]) {
	if r.nfree >= maxFree {
		return
	}
	*e = entry[T]{newer: r.free}
	r.free, r.nfree = e, r.nfree+1
}

// Idle lists the groups last active at least timeout before now, least
// recently active first; it reads only those and the first active one.
func (r *Recent[T]) Idle(now time.Time, timeout time.Duration) []string {
	var keys []string
	limit := now.Add(-timeout).UnixNano()
	for e := r.oldest; e != nil && e.seen <= limit; e = e.newer {
		keys = append(keys, e.key)
	}
	return keys
}

// Keys lists every open group, least recently active first.
func (r *Recent[T]) Keys() []string {
	keys := make([]string, 0, len(r.byKey))
	for e := r.oldest; e != nil; e = e.newer {
		keys = append(keys, e.key)
	}
	return keys
}

func (r *Recent[T]) append(e *entry[T]) {
	e.older, e.newer = r.newest, nil
	if r.newest != nil {
		r.newest.newer = e
	} else {
		r.oldest = e
	}
	r.newest = e
}

func (r *Recent[T]) unlink(e *entry[T]) {
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		r.oldest = e.newer
	}
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		r.newest = e.older
	}
	e.older, e.newer = nil, nil
}

// Each calls f for every open group, least recently active first, with when
// it was last active (unix nanoseconds).
func (r *Recent[T]) Each(f func(key string, seen int64, value T)) {
	for e := r.oldest; e != nil; e = e.newer {
		f(e.key, e.seen, e.value)
	}
}
