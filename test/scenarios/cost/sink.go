// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// sink is the backend every collector exports to: it counts the spans, and
// times each verdict log record from when the request holding its trace was
// sent. One collector runs at a time; reset starts the next one's count.
type sink struct {
	addr  string
	srv   *http.Server
	spans atomic.Int64
	posts atomic.Int64 // trace export requests

	mu         sync.Mutex
	sent       map[pcommon.TraceID]time.Time // when the request holding the trace was sent
	latencies  []time.Duration               // of each record whose trace was sent
	records    int                           // all records, matched or not
	lastRecord time.Time
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{addr: ln.Addr().String(), sent: map[pcommon.TraceID]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", s.traces)
	mux.HandleFunc("/v1/logs", s.logs)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) close() { _ = s.srv.Close() }

// reset forgets the previous collector's exports.
func (s *sink) reset() {
	s.spans.Store(0)
	s.posts.Store(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = map[pcommon.TraceID]time.Time{}
	s.latencies, s.records, s.lastRecord = nil, 0, time.Time{}
}

// sending notes that the request holding these traces is sent at t.
func (s *sink) sending(ids []pcommon.TraceID, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.sent[id] = t
	}
}

func (s *sink) traces(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := ptraceotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.spans.Add(int64(req.Traces().SpanCount()))
	s.posts.Add(1)
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func (s *sink) logs(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	// The time of receipt is taken before decoding: the decoding is this
	// process's, not the collector's.
	now := time.Now()
	req := plogotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, rl := range req.Logs().ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				s.records++
				if at, ok := s.sent[lr.TraceID()]; ok {
					s.latencies = append(s.latencies, now.Sub(at))
				}
			}
		}
	}
	s.lastRecord = now
	s.mu.Unlock()
	resp, _ := plogotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// exportLimit bounds the wait for a collector's last spans after its last
// request was acknowledged.
const exportLimit = 60 * time.Second

// waitSpans waits until want spans have come, or the collector exited
// (alive's error), or exportLimit passed.
func (s *sink) waitSpans(want int, alive func() error) error {
	for deadline := time.Now().Add(exportLimit); s.spans.Load() < int64(want); time.Sleep(10 * time.Millisecond) {
		if err := alive(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			got := s.spans.Load()
			return fmt.Errorf("%d of %d acknowledged spans exported within %v: %d lost", got, want, exportLimit, int64(want)-got)
		}
	}
	return nil
}

// waitRecordsQuiet waits until no record has come for quiet, the first
// record included, or until limit.
func (s *sink) waitRecordsQuiet(quiet, limit time.Duration) {
	began := time.Now()
	for deadline := began.Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s.mu.Lock()
		last := s.lastRecord
		s.mu.Unlock()
		if last.IsZero() {
			last = began
		}
		if time.Since(last) > quiet {
			return
		}
	}
}

// recordLatencies are the latencies of the records whose trace was sent,
// and how many records came in all.
func (s *sink) recordLatencies() ([]time.Duration, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.latencies...), s.records
}
