package main

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// traceSink is an OTLP/HTTP traces endpoint on a loopback port: it keeps
// each export request as it came (protobuf), to replay the same bytes to
// several collectors, and to count what a sampler kept.
type traceSink struct {
	srv    *http.Server
	addr   string
	mu     sync.Mutex
	bodies [][]byte
	last   time.Time
}

func startTraceSink() (*traceSink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &traceSink{addr: l.Addr().String()}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// endpoint is the OTLP/HTTP traces URL.
func (s *traceSink) endpoint() string { return "http://" + s.addr + "/v1/traces" }

func (s *traceSink) close() error { return s.srv.Close() }

func (s *traceSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = ptraceotlp.NewExportRequest().UnmarshalProto(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.last = time.Now()
	s.mu.Unlock()
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// requests are the export requests received so far.
func (s *traceSink) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// traces decodes every request received (they were checked on receipt).
func (s *traceSink) traces() []ptrace.Traces {
	var out []ptrace.Traces
	for _, b := range s.requests() {
		req := ptraceotlp.NewExportRequest()
		_ = req.UnmarshalProto(b)
		out = append(out, req.Traces())
	}
	return out
}

// waitQuiet waits until nothing has come for quiet (after a first request),
// or until limit.
func (s *traceSink) waitQuiet(quiet, limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s.mu.Lock()
		last := s.last
		s.mu.Unlock()
		if !last.IsZero() && time.Since(last) > quiet {
			return
		}
	}
}
