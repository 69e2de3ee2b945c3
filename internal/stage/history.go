// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// History says whether a group's history, as the stage handed it to the
// evaluator, may be incomplete. A verdict decided on such a history is still
// reported (nothing is hidden), marked with the reason, so that an alert rule
// can tell a verdict on a whole conversation from one on a fragment. The
// marks are sticky: a monitor that judged a fragment, or events out of
// order, carries that into every later verdict of the group.
type History uint8

const (
	// HistoryPartial: the group's beginning may be missing. It was first seen
	// within warm_up after a start without a complete checkpoint (its earlier
	// traces, or a trace's earlier spans, may have been lost with the
	// previous process; see warmUp), or it came back after max_traces had
	// ended it early, or after it ended idle and was no longer kept
	// (retention).
	HistoryPartial History = 1 << iota
	// HistoryOutOfOrder: a trace of the group was judged after a later trace
	// of it (a sender's retry queue redelivering turns out of order).
	HistoryOutOfOrder
)

// The reasons a group is marked, as the groups-marked metric counts them.
const (
	markWarmUp     = "warm_up"
	markBound      = "max_traces"
	markRetention  = "retention"
	markOutOfOrder = "out_of_order"
)

// Complete reports whether nothing is known to be missing or out of order.
func (h History) Complete() bool { return h == 0 }

// String is the value of the verdict attribute: "" for a complete history,
// else partial (which wins: the beginning may be missing), else
// out_of_order.
func (h History) String() string {
	switch {
	case h&HistoryPartial != 0:
		return verdictattr.HistoryPartial
	case h&HistoryOutOfOrder != 0:
		return verdictattr.HistoryOutOfOrder
	}
	return ""
}

// warmUp decides which new groups are partial after a start. A trace that is
// a group of its own is partial when it started before the start (part of
// it may have been held by the process before) and is judged within the
// window; a conversation is partial when first seen within the window (its
// earlier turns may have been judged by the process before, or, after a
// crash, acknowledged by a component ahead of the stage and lost with it:
// the journal and the state log keep only what reached the stage). Without
// a window (no Start, as in the offline check, or a start from a complete
// checkpoint) none is.
type warmUp struct {
	from, until atomic.Int64 // unix nanoseconds; until 0: no window
}

func (w *warmUp) set(from time.Time, d time.Duration) {
	w.from.Store(from.UnixNano())
	w.until.Store(from.Add(d).UnixNano())
}

// on reports whether the warm-up is on at now.
func (w *warmUp) on(now time.Time) bool {
	until := w.until.Load()
	return until != 0 && now.UnixNano() < until
}

// before reports whether a span that started at ts started before the
// warm-up began.
func (w *warmUp) before(ts pcommon.Timestamp) bool { return int64(ts) < w.from.Load() }

// partial decides for a new group, judged at now, whose first trace
// started at traceStart (0: unknown).
func (w *warmUp) partial(now time.Time, own bool, traceStart pcommon.Timestamp) bool {
	return w.on(now) && (!own || traceStart == 0 || w.before(traceStart))
}

// forgotten remembers, per worker, the groups whose state is gone (ended
// early by max_traces, or ended idle and no longer kept), so that one that
// comes back is marked partial. It holds at most limit keys, the most
// recently forgotten: memory stays bounded, and a group that comes back
// after more than limit others were forgotten is no longer recognised.
type forgotten struct {
	keys  *Recent[string] // the reason it was forgotten
	limit int
}

func newForgotten(limit int) *forgotten {
	return &forgotten{keys: NewRecent[string](), limit: max(limit, 1)}
}

// add remembers key, with why its history is lost (markBound,
// markRetention).
func (f *forgotten) add(key, reason string, now time.Time) {
	f.keys.Remove(key)
	f.keys.Touch(key, now, func() string { return reason })
	for f.keys.Len() > f.limit {
		f.keys.Remove(f.keys.Oldest())
	}
}

// has reports whether key was forgotten, without forgetting it.
func (f *forgotten) has(key string) bool {
	_, ok := f.keys.Get(key)
	return ok
}

// take reports whether key was forgotten, and why, and forgets it: it is
// marked once, in the group that comes back.
func (f *forgotten) take(key string) (string, bool) {
	return f.keys.Remove(key)
}
