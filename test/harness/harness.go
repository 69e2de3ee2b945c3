// SPDX-License-Identifier: Apache-2.0

// Package harness runs the built collectors the scenarios and end-to-end
// tests drive, in the manner of the collector-contrib testbed: a collector
// (otelcol-agentguard, or the router of examples/scaleout) started as a
// process on loopback with free ports, its log in a file, ready when it says
// so and its exit reported at once in its own words; the data sent to it
// (PostTraces, or PostTracesRetrying and SendAllTraces, which retry as an
// exporter does); what it cost the machine, from /proc (ProcessCPU,
// ProcessRSS, and LoadAvg to state the load beside them); and backends that
// keep what it exported (LogSink for the verdict log records, TraceSink for
// spans), to be checked afterwards.
package harness

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// FreeAddrs are n loopback addresses free at once (their listeners are held
// until all are found, so the n differ).
func FreeAddrs(n int) ([]string, error) {
	out := make([]string, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// PostTraces sends one OTLP/HTTP export request (body, encoded as
// contentType: application/json or application/x-protobuf) to the receiver
// at addr, as an SDK's exporter does, and returns when the receiver accepted
// it: the spans' receipt.
func PostTraces(addr, contentType string, body []byte) (time.Time, error) {
	resp, err := http.Post("http://"+addr+"/v1/traces", contentType, bytes.NewReader(body))
	if err != nil {
		return time.Time{}, err
	}
	defer resp.Body.Close()
	at := time.Now()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return at, fmt.Errorf("POST /v1/traces: %s: %s", resp.Status, msg)
	}
	return at, nil
}

// endpoint is what both sinks are: an HTTP server on a free loopback port,
// which knows when its last request came. Its mutex also guards what the
// sink keeps.
type endpoint struct {
	srv  *http.Server
	addr string
	mu   sync.Mutex
	last time.Time
}

// serve serves h on a free loopback port until Close.
func (e *endpoint) serve(h http.Handler) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	e.addr = l.Addr().String()
	e.srv = &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = e.srv.Serve(l) }()
	return nil
}

// Addr is host:port.
func (e *endpoint) Addr() string { return e.addr }

// Close stops the server.
func (e *endpoint) Close() error { return e.srv.Close() }

// WaitQuiet waits until nothing has come for quiet (after a first
// request), or until limit.
func (e *endpoint) WaitQuiet(quiet, limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		e.mu.Lock()
		last := e.last
		e.mu.Unlock()
		if !last.IsZero() && time.Since(last) > quiet {
			return
		}
	}
}

// AppEnv is this process's environment for an agent app the harness runs,
// without the OpenTelemetry exporter and agentguard settings it inherited
// (an inherited OTLP endpoint would make the app export its spans a second
// time, elsewhere; an inherited guard setting would guard a run meant to go
// without), and with extra added.
func AppEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_EXPORTER_OTLP_") && !strings.HasPrefix(kv, "AGENTGUARD_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
