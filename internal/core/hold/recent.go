package hold

import (
	"container/list"
	"time"
)

// Recent holds open groups in the order of their last activity, so that the
// idle ones and, past a bound, the least recently active are found without
// scanning every group: at a high rate of groups (one a trace) a scan per
// eviction would be quadratic. It is not safe for concurrent use.
type Recent[T any] struct {
	order *list.List // of *entry[T], least recently active first
	byKey map[string]*list.Element
}

type entry[T any] struct {
	key   string
	seen  time.Time
	value T
}

// NewRecent returns an empty set.
func NewRecent[T any]() *Recent[T] {
	return &Recent[T]{order: list.New(), byKey: map[string]*list.Element{}}
}

// Touch returns the group's value, made by create if the group is new, and
// marks it active at now.
func (r *Recent[T]) Touch(key string, now time.Time, create func() T) T {
	if el, ok := r.byKey[key]; ok {
		e := el.Value.(*entry[T])
		e.seen = now
		r.order.MoveToBack(el)
		return e.value
	}
	e := &entry[T]{key: key, seen: now, value: create()}
	r.byKey[key] = r.order.PushBack(e)
	return e.value
}

// Len is the number of open groups.
func (r *Recent[T]) Len() int { return len(r.byKey) }

// Oldest is the least recently active group, "" when there is none.
func (r *Recent[T]) Oldest() string {
	if el := r.order.Front(); el != nil {
		return el.Value.(*entry[T]).key
	}
	return ""
}

// Remove drops a group and returns its value.
func (r *Recent[T]) Remove(key string) (T, bool) {
	el, ok := r.byKey[key]
	if !ok {
		var zero T
		return zero, false
	}
	delete(r.byKey, key)
	return r.order.Remove(el).(*entry[T]).value, true
}

// Idle lists the groups last active at least timeout before now, least
// recently active first; it reads only those and the first active one.
func (r *Recent[T]) Idle(now time.Time, timeout time.Duration) []string {
	var keys []string
	for el := r.order.Front(); el != nil; el = el.Next() {
		e := el.Value.(*entry[T])
		if now.Sub(e.seen) < timeout {
			break
		}
		keys = append(keys, e.key)
	}
	return keys
}

// Keys lists every open group, least recently active first.
func (r *Recent[T]) Keys() []string {
	keys := make([]string, 0, len(r.byKey))
	for el := r.order.Front(); el != nil; el = el.Next() {
		keys = append(keys, el.Value.(*entry[T]).key)
	}
	return keys
}
