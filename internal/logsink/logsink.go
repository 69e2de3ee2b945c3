// Package logsink is a logs backend on a loopback port: it takes OTLP/HTTP
// log exports and keeps the records, for the demo and the end-to-end tests.
package logsink

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// Sink receives OTLP/HTTP protobuf log exports.
type Sink struct {
	srv  *http.Server
	addr string
	mu   sync.Mutex
	recs []plog.LogRecord
	at   []time.Time // when each record arrived
	last time.Time
}

// Received is a record and when it arrived.
type Received struct {
	Record plog.LogRecord
	At     time.Time
}

// Start listens on a free loopback port.
func Start() (*Sink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sink{addr: l.Addr().String()}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Addr is host:port; exporters send to http://Addr/v1/logs.
func (s *Sink) Addr() string { return s.addr }

// Close stops the server.
func (s *Sink) Close() error { return s.srv.Close() }

// ServeHTTP takes one export request.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
func (s *Sink) Records() []plog.LogRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]plog.LogRecord(nil), s.recs...)
}

// Received are the records received so far, with their arrival times.
func (s *Sink) Received() []Received {
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
func (s *Sink) WaitFor(n int, limit time.Duration) bool {
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

// WaitQuiet waits until no record has come for quiet (after a first one),
// or until limit.
func (s *Sink) WaitQuiet(quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		s.mu.Lock()
		last := s.last
		s.mu.Unlock()
		if !last.IsZero() && time.Since(last) > quiet {
			return
		}
	}
}
