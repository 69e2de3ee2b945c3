// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// SendBatch gathers what a worker passes on into larger batches: each batch
// passed on costs the next consumer (an exporter) a request, and a stage
// that judges spans on arrival would otherwise pass on one per batch it
// took in. With Timeout 0 every batch judged is passed on at once.
type SendBatch struct {
	// Timeout is the longest a span judged waits to be passed on.
	Timeout time.Duration `mapstructure:"timeout"`
	// Size: a batch is passed on as soon as it holds this many spans (0:
	// DefaultSendBatchSize).
	Size int `mapstructure:"size"`
}

// DefaultSendBatchSize is the batch processor's default send_batch_size.
const DefaultSendBatchSize = 8192

func (b SendBatch) check() error {
	return errors.Join(NonNegativeDuration("send_batch.timeout", b.Timeout), NonNegativeInt("send_batch.size", b.Size))
}

func (b SendBatch) size() int {
	if b.Size > 0 {
		return b.Size
	}
	return DefaultSendBatchSize
}

// outbox is a worker's spans judged and not yet passed on, with their
// journal entries, forgotten only once the spans are passed on.
type outbox struct {
	cfg     SendBatch
	td      ptrace.Traces
	spans   int
	journal []uint64
	timer   *time.Timer // runs while the outbox holds spans
}

func newOutbox(cfg SendBatch) *outbox {
	return &outbox{cfg: cfg, td: ptrace.NewTraces()}
}

// due fires when the oldest span held has waited Timeout; nil while the
// outbox is empty.
func (o *outbox) due() <-chan time.Time {
	if o.spans == 0 || o.timer == nil {
		return nil
	}
	return o.timer.C
}

// send passes out on, at once or in a later batch; its journal entries are
// forgotten once it is passed on. force passes on everything held.
func (w *worker[G]) send(ctx context.Context, out ptrace.Traces, journal []uint64, force bool) {
	o := w.out
	if o.cfg.Timeout == 0 {
		w.pass(ctx, out, journal)
		return
	}
	if n := out.SpanCount(); n > 0 {
		if o.spans == 0 {
			o.arm()
		}
		o.spans += n
		out.ResourceSpans().MoveAndAppendTo(o.td.ResourceSpans())
	}
	o.journal = append(o.journal, journal...)
	if force || o.spans >= o.cfg.size() {
		w.flush(ctx)
	}
}

// flush passes on what the outbox holds.
func (w *worker[G]) flush(ctx context.Context) {
	o := w.out
	if o.timer != nil {
		o.timer.Stop()
	}
	td := o.td
	o.td, o.spans = ptrace.NewTraces(), 0
	w.pass(ctx, td, o.journal)
	o.journal = o.journal[:0]
}

// pass delivers td, then forgets its journal entries (and those left over)
// and writes the state of the groups changed since the last time.
func (w *worker[G]) pass(ctx context.Context, td ptrace.Traces, journal []uint64) {
	w.s.deliver(ctx, td)
	w.unforgotten = append(w.unforgotten, journal...) // none without a journal
	w.writeChanges(ctx)
}

// writeChanges deletes the journal entries of spans passed on and writes the
// state of the groups changed, in one batch; what the storage refused is
// tried again the next time.
func (w *worker[G]) writeChanges(ctx context.Context) {
	if w.s.journal == nil || len(w.unforgotten) == 0 && len(w.changed) == 0 {
		return
	}
	var states []byte
	if len(w.changed) > 0 {
		states = w.changedStates()
	}
	seq, ok := w.s.forget(ctx, w.unforgotten, states)
	if !ok {
		return
	}
	w.unforgotten = w.unforgotten[:0]
	if states != nil {
		w.states = append(w.states, seq)
		clear(w.changed)
	}
}

func (o *outbox) arm() {
	if o.timer == nil {
		o.timer = time.NewTimer(o.cfg.Timeout)
		return
	}
	o.timer.Reset(o.cfg.Timeout)
}
