// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures/stovetrace"
	"github.com/agentguard/agentguard/test/harness"
)

// spansConfig passes every span through temporalcheck, journaled and
// checkpointed on file_storage, to an OTLP exporter whose sending queue is
// persisted (and batched, as the household example's) on a storage of its
// own, on another disk: the collector's persistent queue (v0.165) drops an
// item it cannot mark as read when its disk is full (persistent_queue.go,
// getNextItem, logged at debug), so on the full disk it would lose what
// agentguard kept.
const spansConfig = `
extensions:
  file_storage/x:
    directory: %[1]s
  file_storage/queue:
    directory: %[4]s
receivers:
  otlp:
    protocols:
      http:
        endpoint: %[2]s
processors:
  temporalcheck:
    storage: file_storage/x
    group_by: conversation
    wait: 300ms
    root_wait: 100ms
    group_timeout: 3s
    checkpoint_interval: 500ms
    predicates:
      xferToWeather: {tool: transfer_to_weather}
      getWeather: {tool: get_weather}
    assertions:
      - name: te3
        always: 'xferToWeather >> getWeather'
exporters:
  otlp_http/spans:
    traces_endpoint: %[3]s
    compression: none
    retry_on_failure:
      initial_interval: 100ms
      max_interval: 1s
    sending_queue:
      storage: file_storage/queue
      batch:
        flush_timeout: 200ms
service:
  extensions: [file_storage/x, file_storage/queue]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [temporalcheck]
      exporters: [otlp_http/spans]
`

// spanRun is what a run of acknowledged spans found.
type spanRun struct {
	acknowledged, lost, duplicated, refused int
}

func (r spanRun) String() string {
	return fmt.Sprintf("%d spans acknowledged, %d lost, %d passed on twice, %d requests refused and retried", r.acknowledged, r.lost, r.duplicated, r.refused)
}

// sender plays batches of conversations into a collector as an SDK's
// exporter does: a refused or failed request is sent again until it is
// acknowledged; it records every span acknowledged.
type sender struct {
	addr    string
	batches int
	mu      sync.Mutex
	acked   map[pcommon.SpanID]bool
	refused int
	sent    int // batches acknowledged
}

func (s *sender) run(deadline time.Time) error {
	for b := range s.batches {
		td := ptrace.NewTraces()
		for c := range 20 {
			stovetrace.Trace(b*20+c, fmt.Sprintf("conv-%03d", c), stovetrace.ToolCall{Tool: "transfer_to_weather"}).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		}
		body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			return err
		}
		for {
			if time.Now().After(deadline) {
				return fmt.Errorf("batch %d not acknowledged before the deadline", b)
			}
			if _, err := harness.PostTraces(s.addr, "application/x-protobuf", body); err == nil {
				break
			}
			s.mu.Lock()
			s.refused++
			s.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
		s.mu.Lock()
		for _, id := range spanIDsOf(td) {
			s.acked[id] = true
		}
		s.sent++
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func (s *sender) batchesSent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

func spanIDsOf(td ptrace.Traces) []pcommon.SpanID {
	var ids []pcommon.SpanID
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				ids = append(ids, sp.SpanID())
			}
		}
	}
	return ids
}

// spanFault is what happens to the collector halfway through the run.
type spanFault struct {
	name string
	// during runs while the sender sends; dir is the storage directory.
	during func(dir string, col *harness.Collector, restart func() (*harness.Collector, error)) (*harness.Collector, error)
}

// crash kills the collector with SIGKILL and starts another on the same
// storage and address.
func crash(_ string, col *harness.Collector, restart func() (*harness.Collector, error)) (*harness.Collector, error) {
	col.Kill()
	return restart()
}

// fullDisk fills the storage's file system for two seconds, then frees it.
func fullDisk(dir string, col *harness.Collector, _ func() (*harness.Collector, error)) (*harness.Collector, error) {
	filler := filepath.Join(dir, "filler")
	// dd stops at the file system's end, with an error that is the point.
	_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=64k").Run()
	time.Sleep(2 * time.Second)
	if err := os.Remove(filler); err != nil {
		return col, err
	}
	return col, nil
}

// runSpans sends batches of conversations through a collector on
// file_storage while fault strikes it, and counts the acknowledged spans
// that never reached the backend.
func runSpans(bin string, batches int, fault spanFault, dir string) (spanRun, error) {
	sink, err := harness.StartTraceSink()
	if err != nil {
		return spanRun{}, err
	}
	defer sink.Close()
	addrs, err := harness.FreeAddrs(1)
	if err != nil {
		return spanRun{}, err
	}
	path := filepath.Join(dir, "..", filepath.Base(dir)+"-config.yaml")
	queueDir, err := os.MkdirTemp("", "agentguard-queue-*")
	if err != nil {
		return spanRun{}, err
	}
	defer os.RemoveAll(queueDir)
	if err := os.WriteFile(path, fmt.Appendf(nil, spansConfig, dir, addrs[0], sink.Endpoint(), queueDir), 0o600); err != nil {
		return spanRun{}, err
	}
	defer os.Remove(path)
	starts := 0
	start := func() (*harness.Collector, error) {
		starts++
		return harness.StartCollector(harness.CollectorOptions{Bin: bin, Configs: []string{path},
			Log: filepath.Join(os.TempDir(), fmt.Sprintf("agentguard-%s-%d.log", filepath.Base(dir), starts))})
	}
	col, err := start()
	if err != nil {
		return spanRun{}, err
	}
	s := &sender{addr: addrs[0], batches: batches, acked: map[pcommon.SpanID]bool{}}
	done := make(chan error, 1)
	go func() { done <- s.run(time.Now().Add(2 * time.Minute)) }()
	for s.batchesSent() < batches/2 {
		time.Sleep(10 * time.Millisecond)
	}
	col, faultErr := fault.during(dir, col, start)
	sendErr := <-done
	if col != nil {
		sink.WaitQuiet(2*time.Second, 20*time.Second)
		col.Stop()
	}
	if err := errors.Join(faultErr, sendErr); err != nil {
		return spanRun{}, err
	}
	got := map[pcommon.SpanID]int{}
	for _, td := range sink.Traces() {
		for _, id := range spanIDsOf(td) {
			got[id]++
		}
	}
	r := spanRun{acknowledged: len(s.acked), refused: s.refused}
	for id := range s.acked {
		switch {
		case got[id] == 0:
			r.lost++
		case got[id] > 1:
			r.duplicated++
		}
	}
	return r, nil
}
