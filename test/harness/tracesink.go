// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TraceSink is an OTLP/HTTP traces endpoint on a loopback port: it keeps
// each export request as it came (protobuf), to replay the same bytes to
// several collectors, and to count what a collector or sampler passed on.
type TraceSink struct {
	endpoint
	bodies [][]byte
}

// StartTraceSink listens on a free loopback port.
func StartTraceSink() (*TraceSink, error) {
	s := &TraceSink{}
	return s, s.serve(s)
}

// Endpoint is the OTLP/HTTP traces URL, http://Addr/v1/traces.
func (s *TraceSink) Endpoint() string { return "http://" + s.addr + "/v1/traces" }

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
