// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Decided is one decision as the endpoint answered it: an entry of the
// audit trail of what was asked, answered and why.
type Decided struct {
	Time        time.Time
	Group       string
	AfterSpanID pcommon.SpanID
	// Action is the action as asked, in JSON.
	Action   string
	Response DecisionResponse
	// Took is how long the answer took, the wait for fresh spans included.
	Took time.Duration
}

// DecisionLog is what the extension offers a component that keeps an
// audit trail of its decisions (the verdictlogs connector, with its
// decisions setting), found among host.GetExtensions().
type DecisionLog interface {
	// Follow calls f with every decision, once it has been answered, on
	// the request's goroutine, until stop is called. f must not keep d's
	// slices past its return.
	Follow(f func(ctx context.Context, d Decided)) (stop func())
}

// followers are the extension's DecisionLog.
type followers struct {
	mu    sync.RWMutex
	next  int
	byKey map[int]func(context.Context, Decided)
}

func (fs *followers) Follow(f func(context.Context, Decided)) func() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.byKey == nil {
		fs.byKey = map[int]func(context.Context, Decided){}
	}
	key := fs.next
	fs.next++
	fs.byKey[key] = f
	return func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		delete(fs.byKey, key)
	}
}

// tell gives d to every follower. The answer has gone out: the request's
// cancellation (the agent hanging up) must not cut the audit trail short.
func (fs *followers) tell(ctx context.Context, d Decided) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	ctx = context.WithoutCancel(ctx)
	for _, f := range fs.byKey {
		f(ctx, d)
	}
}
