// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"testing"
	"time"
)

// A sender waiting for room is let in by any span done, not only by the
// backlog falling below its limit: 8 of 10 spans queued, a batch of 5
// waits, and 8 done must let it in.
func TestBacklogWakesASenderWhenSpansAreDone(t *testing.T) {
	b := newBacklog(10)
	b.add(8)
	in := make(chan error, 1)
	go func() { in <- b.wait(context.Background(), 5) }()
	select {
	case err := <-in:
		t.Fatalf("admitted with 8 of 10 queued and 5 more: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	b.done(8)
	select {
	case err := <-in:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the backlog emptied and the sender still waits")
	}
}

// A batch larger than the whole limit is taken alone, when nothing waits
// before it; a sender that gives up gets its context's error.
func TestBacklogTakesAnOversizeBatchAloneAndRefusesOnCancel(t *testing.T) {
	b := newBacklog(10)
	if err := b.wait(context.Background(), 50); err != nil {
		t.Fatalf("an oversize batch into an empty backlog: %v", err)
	}
	b.add(50)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := b.wait(ctx, 1); err != context.DeadlineExceeded {
		t.Fatalf("waiting on a full backlog: %v, want the deadline", err)
	}
}

// Items come out in the order they went in; two clock items with nothing to
// judge in a row are one, at the later time, so a stuck worker's inbox does
// not grow by one item a tick.
func TestInboxKeepsOrderAndMergesIdleClockItems(t *testing.T) {
	q := newInbox[struct{}]()
	t0 := time.Unix(100, 0)
	judge := work[struct{}]{now: t0, late: []lateChunk{{key: "a"}}}
	q.put(judge)
	for i := range 50 {
		q.put(work[struct{}]{now: t0.Add(time.Duration(i) * time.Second), idle: true, all: true})
	}
	q.put(work[struct{}]{now: t0, final: true, idle: true})
	items, ok := q.take(nil)
	if !ok || len(items) != 3 {
		t.Fatalf("took %d items (%v), want the chunk, one clock item and the final one", len(items), ok)
	}
	if items[0].late[0].key != "a" || !items[1].now.Equal(t0.Add(49*time.Second)) || !items[2].final {
		t.Errorf("items out of order or not merged: %+v", items)
	}
	q.close()
	if _, ok := q.take(nil); ok {
		t.Error("a closed, empty inbox gave work")
	}
}
