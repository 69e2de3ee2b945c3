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
	last time.Time
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
	s.mu.Lock()
	for _, rl := range req.Logs().ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				c := plog.NewLogRecord()
				lr.CopyTo(c)
				s.recs = append(s.recs, c)
			}
		}
	}
	s.last = time.Now()
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
