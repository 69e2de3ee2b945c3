// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// LogSink is a logs backend on a loopback port: it takes OTLP/HTTP
// (protobuf) log exports, the collector's verdict log records, and keeps the
// records with when each arrived.
type LogSink struct {
	endpoint
	recs []plog.LogRecord
	at   []time.Time // when each record arrived
}

// Received is a record and when it arrived.
type Received struct {
	Record plog.LogRecord
	At     time.Time
}

// StartLogSink listens on a free loopback port.
func StartLogSink() (*LogSink, error) {
	s := &LogSink{}
	return s, s.serve(s)
}

// Endpoint is the OTLP/HTTP logs URL, http://Addr/v1/logs: what
// AGENTGUARD_VERDICTS_ENDPOINT is set to.
func (s *LogSink) Endpoint() string { return "http://" + s.addr + "/v1/logs" }

// ServeHTTP takes one export request.
func (s *LogSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := plogotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	s.mu.Lock()
	for _, rl := range req.Logs().ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				c := plog.NewLogRecord()
				lr.CopyTo(c)
				s.recs = append(s.recs, c)
				s.at = append(s.at, now)
			}
		}
	}
	s.last = now
	s.mu.Unlock()
	resp, _ := plogotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// Records are the records received so far.
func (s *LogSink) Records() []plog.LogRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]plog.LogRecord(nil), s.recs...)
}

// Received are the records received so far, with their arrival times.
func (s *LogSink) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Received, len(s.recs))
	for i, r := range s.recs {
		out[i] = Received{r, s.at[i]}
	}
	return out
}

// WaitFor waits until n records have come, or until limit; it reports
// whether they came.
func (s *LogSink) WaitFor(n int, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		got := len(s.recs)
		s.mu.Unlock()
		if got >= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
