// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// The waits between two tries of a refused batch: doubled after each
// refusal, up to the longest.
const (
	retryFirstWait   = 5 * time.Millisecond
	retryLongestWait = time.Second
)

// deliver passes a batch on and keeps it until the next consumer takes it.
// The spans were acknowledged when they came in, so a refusal cannot go
// back to their sender: the batch is tried again, with backoff, while the
// caller (a worker, or ConsumeTraces) waits. A waiting worker keeps the
// backlog full, so admission holds new spans back at the receiver and their
// senders see the pressure. A batch is given up only when the consumer
// refuses it as permanent (it would never take it) or when Shutdown's
// deadline ends the waiting; both are counted and logged once.
func (s *Stage[G]) deliver(ctx context.Context, td ptrace.Traces) {
	if td.ResourceSpans().Len() == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx) // the sender's deadline no longer bounds spans it handed over
	wait := retryFirstWait
	for {
		err := s.next.ConsumeTraces(ctx, td)
		if err == nil {
			return
		}
		if consumererror.IsPermanent(err) {
			s.lose(ctx, td, "the next consumer refused a batch of spans as permanent; it is lost to this pipeline", err)
			return
		}
		s.tel.ForwardRetries.Add(ctx, 1)
		s.Warnings.Once("forward-retry", "the next consumer refused a batch of spans; it is kept and retried, and incoming spans wait meanwhile", zap.Error(err))
		select {
		case <-s.aborted:
			s.lose(ctx, td, "the next consumer still refused a batch of spans when shutdown's deadline came; it is lost", err)
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, retryLongestWait)
	}
}

func (s *Stage[G]) lose(ctx context.Context, td ptrace.Traces, msg string, err error) {
	s.tel.ForwardFailures.Add(ctx, 1)
	s.Warnings.Once("forward-lost", msg, zap.Int("spans", td.SpanCount()), zap.Error(err))
}
