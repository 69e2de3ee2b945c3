// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"sync"
	"time"
)

// backlog weighs the spans handed to the workers and not yet passed on.
// Handing work over never waits on it: a release by the clock moves traces
// the buffer already held, so it adds nothing to memory, and a release that
// waited for one worker's room would starve the others. What waits is
// taking new spans in (admit), while the backlog is over its limit.
type backlog struct {
	mu      sync.Mutex
	spans   int64
	limit   int64
	room    chan struct{} // closed, and replaced, when spans are done while a sender waits
	waiting bool          // a sender waits on room
}

func newBacklog(limit int64) *backlog {
	return &backlog{limit: limit, room: make(chan struct{})}
}

func (b *backlog) add(n int64) {
	b.mu.Lock()
	b.spans += n
	b.mu.Unlock()
}

func (b *backlog) done(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spans -= n
	if b.waiting && n > 0 {
		close(b.room)
		b.room, b.waiting = make(chan struct{}), false
	}
}

// fits reports whether n more spans fit, and else the channel closed when
// they may: n fits under the limit, or the backlog is empty (a batch larger
// than the whole limit is taken alone).
func (b *backlog) fits(n int64) (bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spans == 0 || b.spans+n <= b.limit {
		return true, nil
	}
	b.waiting = true
	return false, b.room
}

// wait returns when n more spans fit, or with ctx's error.
func (b *backlog) wait(ctx context.Context, n int64) error {
	for {
		ok, room := b.fits(n)
		if ok {
			return nil
		}
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// inbox is one worker's work, in order. It is not bounded itself: what
// enters it is bounded before it (the buffer's max_traces, and admission
// by the backlog), and the clock's items with nothing to judge are merged.
type inbox[G any] struct {
	mu     sync.Mutex
	items  []work[G]
	closed bool
	ready  chan struct{} // holds a token while items wait
}

func newInbox[G any]() *inbox[G] { return &inbox[G]{ready: make(chan struct{}, 1)} }

func (q *inbox[G]) put(w work[G]) {
	q.mu.Lock()
	if n := len(q.items); n > 0 && w.onlyClock() && q.items[n-1].onlyClock() {
		q.items[n-1].now = laterOf(q.items[n-1].now, w.now)
	} else {
		q.items = append(q.items, w)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *inbox[G]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take waits for work and returns all that waits, in order; nothing when
// due fires first (nil: never); false once the inbox is closed and empty.
func (q *inbox[G]) take(due <-chan time.Time) ([]work[G], bool) {
	for {
		q.mu.Lock()
		if items := q.items; len(items) > 0 {
			q.items = nil
			q.mu.Unlock()
			return items, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-q.ready:
		case <-due:
			return nil, true
		}
	}
}

// close lets the worker stop once it has taken what waits.
func (q *inbox[G]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
