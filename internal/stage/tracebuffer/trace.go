// SPDX-License-Identifier: Apache-2.0

package tracebuffer

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Reason says why a trace was released.
type Reason int

const (
	Complete Reason = iota // no new span for Wait
	RootDone               // RootWait after its root span arrived
	Evicted                // the oldest trace, released early at MaxTraces
	Oversize               // more than MaxSpansPerTrace spans
	Shutdown               // released by Flush
	Taken                  // taken by its owner before it was due (Take): its later spans follow as late
)

func (r Reason) String() string {
	return [...]string{"complete", "root_wait", "evicted", "oversize", "shutdown", "taken"}[r]
}

// Early reports whether the trace was released before it was complete.
func (r Reason) Early() bool { return r == Evicted || r == Oversize }

// Trace is a trace held or released. Spans holds every span of the trace
// that arrived before its release, under copies of their resources and
// scopes (spans that shared a resource and scope in different batches sit
// under separate copies).
type Trace struct {
	ID     pcommon.TraceID
	Spans  ptrace.Traces
	Count  int // spans
	Reason Reason
	// Journal is the owner's: the entries of its journal that hold these
	// spans, deleted once they are passed on. The buffer does not read it.
	Journal []uint64

	first, last, root time.Time         // arrivals: first span, last span, root span
	hasRoot           bool              // root is set (a fake clock may start at the zero time)
	start             pcommon.Timestamp // the earliest span start
	touched           uint64            // the Add call that last grew the trace
	due               bool              // picked by the Expire under way
}

// FirstArrival and LastArrival are when the trace's first and latest spans
// arrived, by the buffer's clock.
func (t *Trace) FirstArrival() time.Time { return t.first }

// RootArrival is when the root span (empty parent span ID) arrived; ok is
// false when it has not.
func (t *Trace) RootArrival() (at time.Time, ok bool) { return t.root, t.hasRoot }

// Start is the earliest start time among the trace's spans.
func (t *Trace) Start() pcommon.Timestamp { return t.start }

// LastArrival is when the trace's latest span arrived.
func (t *Trace) LastArrival() time.Time { return t.last }
