// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/core/predicate"
)

// minRemembered is the fewest released trace IDs kept to recognise late
// spans (about 70 bytes each), however small max_traces is.
const minRemembered = 10_000

// Bounds are a holding processor's waits and limits, each named in messages
// as its configuration field is.
type Bounds struct {
	Wait, RootWait, GroupTimeout time.Duration
	MaxTraces, MaxSpansPerTrace  int
	// Workers evaluate groups in parallel; 0 means one per core (GOMAXPROCS).
	Workers int
}

// Validate reports every bound out of range.
func (b Bounds) Validate() error {
	return errors.Join(PositiveDuration("wait", b.Wait), NonNegativeDuration("root_wait", b.RootWait),
		PositiveDuration("group_timeout", b.GroupTimeout),
		PositiveInt("max_traces", b.MaxTraces), PositiveInt("max_spans_per_trace", b.MaxSpansPerTrace),
		NonNegativeInt("workers", b.Workers))
}

// workers is the number of workers (and of trace buffers).
func (b Bounds) workers() int {
	if b.Workers > 0 {
		return b.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// interval checks deadlines often enough to release a trace within a quarter
// of its wait, between 10ms and 1s.
func (b Bounds) interval() time.Duration {
	d := b.Wait
	if b.RootWait > 0 {
		d = min(d, b.RootWait)
	}
	return min(max(d/4, 10*time.Millisecond), time.Second)
}

// LatePolicy says what becomes of a span that arrives after its trace was
// released.
type LatePolicy int

const (
	// LateResume ends a trace that is a group of its own as soon as it is
	// released, so that its end-of-sequence verdicts go on its spans at
	// once, and keeps it for GroupTimeout: its late spans resume it where
	// it ended, and the verdicts of its next end are marked out_of_order
	// (they may repeat or contradict the first end's). Late spans of a trace
	// in a group of an attribute continue that group, which stays open until
	// group_timeout, as with LateContinue.
	LateResume LatePolicy = iota
	// LateContinue judges late spans as the continuation of their trace's
	// group, which stays open until group_timeout.
	LateContinue
)

// JudgedForQuestions is how many judged span IDs each worker keeps when
// questions may wait for one (RememberJudged; about 1 MB a worker): an agent
// asks about the span it exported last, moments after.
const JudgedForQuestions = 1 << 15

// Config is what a processor tells the stage.
type Config struct {
	Bounds
	// GroupBy is as sequence.Split takes it.
	GroupBy string
	Late    LatePolicy
	// WarnTyposAfter: this long into the traffic, each predicate that has
	// not held once, and a group_by attribute no trace carried, is logged
	// with the nearest name seen (typoWatch; 0: never). Literals are the
	// names the shorthand predicates match, for that suggestion.
	WarnTyposAfter time.Duration
	Literals       map[string]predicate.Literal
	// Optional are the predicates that may never hold: no warning about them.
	Optional map[string]bool
	// WarnUnheldAfter: a predicate that has not held in this many events in a
	// row is logged once at WARN (0: never).
	WarnUnheldAfter int
	// Scope names the instrumentation scope of the verdict spans the stage
	// makes (the processor's scope name).
	Scope string
	// AfterTick, if set, runs after each release by the clock (or Tick).
	AfterTick func()
	// WarmUp: a group first seen this long after Start is marked partial
	// (0: none is). With Storage, only after a start that found evidence of
	// lost history: a checkpoint behind (a crash's), or one it could not
	// restore. Without, after every start (nothing tells a restart).
	WarmUp time.Duration
	// Storage, if set, is the storage extension the open groups are
	// checkpointed to every CheckpointEvery and at shutdown, and restored
	// from at Start; the Evaluator must be a Checkpointer. A stage with
	// storage does not end its groups at shutdown: the next start goes on
	// with them.
	Storage         *component.ID
	CheckpointEvery time.Duration
	// Retention: a group of an attribute that ended idle is kept (saved, as
	// in a checkpoint) this long, so that a later trace continues it; past
	// it, or with 0, one that comes back is marked partial. Needs a
	// Checkpointer evaluator; without one nothing is kept.
	Retention time.Duration
	// CompactAfter: an open group idle this long is kept in its saved form
	// (as a checkpoint holds it) until its next span, a question about it,
	// or its end, which rebuild it (0: never). Needs a Checkpointer
	// evaluator; without one nothing is compacted.
	CompactAfter time.Duration
	// ID is the processor's: its storage client's name.
	ID component.ID
	// AfterCheckpoint, if set, runs after each checkpoint written.
	AfterCheckpoint func()
	// QueueSpans bounds the spans handed to the workers and not yet passed
	// on (0: queueSpansPerWorker a worker).
	QueueSpans int
	// OnArrival judges spans as they arrive instead of when their trace is
	// complete: a trace goes to its group's worker as soon as its group is
	// known (at once by trace ID; by an attribute, from the first batch
	// that carries it; a trace without it is held as usual), and each later
	// batch of it follows as its continuation. ConsumeTraces returns when
	// the batch has been judged. An event that starts before an event its
	// group already judged is out of order: counted (OutOfOrderEvents) and
	// judged as the continuation. Needs Late: LateContinue.
	OnArrival bool
	// SendBatch gathers what the workers pass on into batches.
	SendBatch SendBatch
	// RememberJudged is how many of the span IDs it judged last each worker
	// keeps, so that Ask can wait for one (0: none, and Ask cannot wait).
	RememberJudged int
}

// PositiveDuration reports a duration field that is not positive.
func PositiveDuration(field string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s: must be a positive duration, got %v", field, d)
	}
	return nil
}

// NonNegativeDuration reports a duration field that is negative.
func NonNegativeDuration(field string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s: must not be negative, got %v", field, d)
	}
	return nil
}

// PositiveInt reports a count field that is not positive.
func PositiveInt(field string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s: must be positive, got %d", field, v)
	}
	return nil
}

// NonNegativeInt reports a count field that is negative.
func NonNegativeInt(field string, v int) error {
	if v < 0 {
		return fmt.Errorf("%s: must not be negative, got %d", field, v)
	}
	return nil
}
