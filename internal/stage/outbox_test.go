// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// batchSink records each batch passed on, and refuses the first refusals
// (retryable) as a full exporter queue does.
type batchSink struct {
	mu       sync.Mutex
	batches  []int // spans a batch
	at       []time.Time
	refusals int
}

func (b *batchSink) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refusals > 0 {
		b.refusals--
		return errors.New("queue full")
	}
	b.batches = append(b.batches, td.SpanCount())
	b.at = append(b.at, time.Now())
	return nil
}

func (b *batchSink) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (b *batchSink) spans() (n int, batches int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.batches {
		n += s
	}
	return n, len(b.batches)
}

// onArrivalConfig judges on arrival, one worker, with send_batch.
func onArrivalConfig(sb SendBatch) Config {
	cfg := baseConfig()
	cfg.OnArrival, cfg.Late, cfg.Workers, cfg.SendBatch = true, LateContinue, 1, sb
	return cfg
}

// consume sends n one-call turns of n conversations, and returns the spans.
func consume(t *testing.T, s *Stage[*recGroup], n int) int {
	t.Helper()
	spans := 0
	for turn := range n {
		td := fixtures.StoveTrace(turn, "conv-"+string(rune('a'+turn%26)), fixtures.ToolCall{Tool: "stir"})
		spans += td.SpanCount()
		if err := s.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	return spans
}

// What the workers judge waits to be passed on in one batch, and a shutdown
// passes it on: nothing is lost, and one request goes where twenty would.
func TestSendBatchGathersWhatIsJudged(t *testing.T) {
	sink := new(batchSink)
	s := newTestStage(t, onArrivalConfig(SendBatch{Timeout: time.Hour}), newRecorder(), sink)
	in := consume(t, s, 20)
	if n, _ := sink.spans(); n != 0 {
		t.Fatalf("%d spans passed on before the batch was due", n)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, batches := sink.spans(); n != in || batches != 1 {
		t.Errorf("%d of %d spans passed on in %d batches, want all in 1", n, in, batches)
	}
}

// A batch is passed on as soon as it holds size spans, before
// ConsumeTraces returns.
func TestSendBatchPassesOnAFullBatch(t *testing.T) {
	sink := new(batchSink)
	s := newTestStage(t, onArrivalConfig(SendBatch{Timeout: time.Hour, Size: 10}), newRecorder(), sink)
	defer s.Shutdown(context.Background())
	in := consume(t, s, 20)
	n, batches := sink.spans()
	if n < in-10 || batches == 0 {
		t.Fatalf("%d of %d spans passed on in %d batches, want all but fewer than 10", n, in, batches)
	}
	for _, b := range sink.batches {
		if b < 10 {
			t.Errorf("a batch of %d spans passed on before it was full: %v", b, sink.batches)
		}
	}
}

// With nothing more coming, a span waits timeout, not longer.
func TestSendBatchTimeout(t *testing.T) {
	const timeout = 30 * time.Millisecond
	sink := new(batchSink)
	s := newTestStage(t, onArrivalConfig(SendBatch{Timeout: timeout}), newRecorder(), sink)
	defer s.Shutdown(context.Background())
	start := time.Now()
	in := consume(t, s, 1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if n, _ := sink.spans(); n == in {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch was never passed on")
		}
	}
	if waited := sink.at[0].Sub(start); waited < timeout {
		t.Errorf("passed on after %v, before the timeout %v", waited, timeout)
	}
}

// A refusal downstream is retried with the whole batch: nothing is lost.
func TestSendBatchRetriesARefusal(t *testing.T) {
	sink := &batchSink{refusals: 3}
	s := newTestStage(t, onArrivalConfig(SendBatch{Timeout: time.Hour, Size: 8}), newRecorder(), sink)
	in := consume(t, s, 12)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := sink.spans(); n != in {
		t.Errorf("%d of %d spans passed on", n, in)
	}
}

// A checkpoint records the groups as judged, so what was judged leaves
// first: a crash after it cannot lose spans waiting in a batch.
func TestCheckpointPassesOnTheBatch(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	cfg := storageConfig()
	cfg.WarmUp, cfg.SendBatch = 0, SendBatch{Timeout: time.Hour}
	sink := new(consumertest.TracesSink)
	s := newTestStage(t, cfg, newRecorder(), sink)
	s.UseClock(func() time.Time { return clock })
	if err := s.Start(context.Background(), store.Host(storageID)); err != nil {
		t.Fatal(err)
	}
	s.clock.halt()
	defer s.Shutdown(context.Background())
	feed(t, s, &clock, 0, "a") // released at its tick, judged, waiting in the batch
	if sink.SpanCount() != 0 {
		t.Fatalf("%d spans passed on before the batch was due", sink.SpanCount())
	}
	clock = clock.Add(10 * time.Second)
	s.Tick(clock) // a checkpoint is due
	if sink.SpanCount() == 0 {
		t.Error("a checkpoint was written with judged spans not passed on")
	}
}

// A negative timeout or size is refused, named as in the configuration.
func TestSendBatchChecked(t *testing.T) {
	err := SendBatch{Timeout: -time.Second, Size: -1}.check()
	if err == nil || !strings.Contains(err.Error(), "send_batch.timeout") || !strings.Contains(err.Error(), "send_batch.size") {
		t.Errorf("check: %v", err)
	}
}
