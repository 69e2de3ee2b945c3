package harness

import (
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TraceSink is an OTLP/HTTP traces endpoint on a loopback port: it keeps
// each export request as it came (protobuf), to replay the same bytes to
// several collectors, and to count what a collector or sampler passed on.
type TraceSink struct {
	srv    *http.Server
	addr   string
	mu     sync.Mutex
	bodies [][]byte
	last   time.Time
}

// StartTraceSink listens on a free loopback port.
func StartTraceSink() (*TraceSink, error) {
	s := &TraceSink{}
	var err error
	s.srv, s.addr, err = serve(s)
	return s, err
}

// Addr is host:port: what an SDK's or a collector's OTLP/HTTP exporter is
// pointed at.
func (s *TraceSink) Addr() string { return s.addr }

// Endpoint is the OTLP/HTTP traces URL, http://Addr/v1/traces.
func (s *TraceSink) Endpoint() string { return "http://" + s.addr + "/v1/traces" }

// Close stops the server.
func (s *TraceSink) Close() error { return s.srv.Close() }

// ServeHTTP takes one export request.
func (s *TraceSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

// Requests are the export requests received so far.
func (s *TraceSink) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// Traces decodes every request received (they were checked on receipt).
func (s *TraceSink) Traces() []ptrace.Traces {
	var out []ptrace.Traces
	for _, b := range s.Requests() {
		req := ptraceotlp.NewExportRequest()
		_ = req.UnmarshalProto(b)
		out = append(out, req.Traces())
	}
	return out
}

// WaitQuiet waits until nothing has come for quiet (after a first request),
// or until limit.
func (s *TraceSink) WaitQuiet(quiet, limit time.Duration) { waitQuiet(s.lastArrival, quiet, limit) }

func (s *TraceSink) lastArrival() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
