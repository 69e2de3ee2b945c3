// SPDX-License-Identifier: Apache-2.0

// Command pipelinecpu measures the household configuration's CPU per span
// in the built collector, beside a pass-through pipeline run the same way:
// each configuration in its own otelcol-agentguard process, fed the real
// LangGraph episodes over OTLP/HTTP (protobuf) by this process, exporting
// over OTLP/HTTP to a sink in this process; the collector's own CPU time
// (utime + stime from /proc) over the spans it exported is what it reports.
//
//	go run ./test/scenarios/household-cpu -n 600
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/household"
)

// passThroughConfig receives and exports, and does nothing else.
const passThroughConfig = `
receivers:
  otlp:
    protocols:
      http:
        endpoint: ${env:AGENTGUARD_OTLP_HTTP}
exporters:
  otlp_http/sink:
    traces_endpoint: ${env:AGENTGUARD_SINK}/v1/traces
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_http/sink]
`

// householdToSink, merged over the example's configuration, exports its
// spans to the sink (and its verdicts, through AGENTGUARD_VERDICTS_ENDPOINT)
// instead of printing them.
const householdToSink = `
exporters:
  otlp_http/sink:
    traces_endpoint: ${env:AGENTGUARD_SINK}/v1/traces
    compression: none
service:
  pipelines:
    traces/household:
      exporters: [verdictlogs, otlp_http/sink]
    logs/verdicts:
      exporters: [otlp_http/verdicts]
`

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times.
const clockTicks = 100

func main() {
	n := flag.Int("n", 600, "episodes sent to each configuration")
	senders := flag.Int("senders", 4, "concurrent senders")
	bin := flag.String("collector", "dist/otelcol-agentguard", "the built collector")
	flag.Parse()
	if err := run(*n, *senders, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "pipelinecpu:", err)
		os.Exit(1)
	}
}

func run(n, senders int, bin string) error {
	requests, spans, err := episodes(n)
	if err != nil {
		return err
	}
	sink, err := startSink()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pipelinecpu")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var perSpan [2]float64
	for i, c := range []struct {
		name    string
		configs []string // files, or YAML written to a file
	}{
		{"pass-through", []string{passThroughConfig}},
		{"household (probguard)", []string{"examples/household/collector.yaml", householdToSink}},
	} {
		var paths []string
		for j, cfg := range c.configs {
			if !strings.Contains(cfg, "\n") {
				paths = append(paths, cfg)
				continue
			}
			path := filepath.Join(dir, fmt.Sprintf("config-%d-%d.yaml", i, j))
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				return err
			}
			paths = append(paths, path)
		}
		cpu, err := measure(bin, paths, sink, requests, spans, senders)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		perSpan[i] = cpu.Seconds() * 1e6 / float64(spans)
		fmt.Printf("%-22s %d episodes, %d spans: collector CPU %v, %.2f µs a span\n", c.name, len(requests), spans, cpu, perSpan[i])
	}
	fmt.Printf("ratio: %.2f\n", perSpan[1]/perSpan[0])
	return nil
}

// measure runs one configuration and returns the collector's CPU time from
// the first request sent to the last span exported.
func measure(bin string, configs []string, sink *sink, requests [][]byte, spans, senders int) (time.Duration, error) {
	addrs, err := harness.FreeAddrs(1)
	if err != nil {
		return 0, err
	}
	otlp := addrs[0]
	col, err := harness.StartCollector(harness.CollectorOptions{Bin: bin, Configs: configs,
		Sets: []string{"service::telemetry::metrics::level=none"},
		Env: []string{"AGENTGUARD_OTLP_HTTP=" + otlp, "AGENTGUARD_SINK=http://" + sink.addr,
			"AGENTGUARD_VERDICTS_ENDPOINT=http://" + sink.addr + "/v1/logs", "AGENTGUARD_HOUSEHOLD_MODEL=examples/household/model.json"}})
	if err != nil {
		return 0, err
	}
	defer col.Kill()
	sink.spans.Store(0)
	before, err := cpuOf(col.Pid())
	if err != nil {
		return 0, err
	}
	retries, err := send(otlp, requests, senders)
	if err != nil {
		return 0, err
	}
	want := int64(spans)
	for deadline := time.Now().Add(60 * time.Second); sink.spans.Load() < want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d acknowledged spans exported (%d spans lost, %d requests retried); its log: %s",
				sink.spans.Load(), want, want-sink.spans.Load(), retries, col.Log())
		}
	}
	fmt.Printf("  exported all %d acknowledged spans (%d requests refused and retried)\n", want, retries)
	after, err := cpuOf(col.Pid())
	return after - before, err
}

// send posts every request, senders at a time, and retries one the
// collector refuses as retryable (429, 502, 503, 504) after a backoff, as an
// OTLP exporter does: the pressure of a saturated collector slows the
// senders down, and a span is lost only if the collector acknowledged it.
// It returns how many retries it made.
func send(addr string, requests [][]byte, senders int) (int64, error) {
	var wg sync.WaitGroup
	var next, retries atomic.Int64
	errs := make([]error, senders)
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(requests); i = int(next.Add(1)) - 1 {
				n, err := post(addr, requests[i])
				retries.Add(n)
				if err != nil {
					errs[s] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return retries.Load(), errors.Join(errs...)
}

// post sends one request until the collector takes it, for a minute at most.
func post(addr string, body []byte) (int64, error) {
	wait := 5 * time.Millisecond
	for tries := int64(0); ; tries++ {
		resp, err := http.Post("http://"+addr+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			return tries, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return tries, nil
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			if wait > time.Minute {
				return tries, fmt.Errorf("still refused after %d tries: %s", tries+1, resp.Status)
			}
			time.Sleep(wait)
			wait *= 2
		default:
			return tries, errors.New(resp.Status)
		}
	}
}

// episodes are n requests, each a real episode made a new trace in a new
// LangGraph thread, and their spans in all.
func episodes(n int) ([][]byte, int, error) {
	var tds []ptrace.Traces
	for _, name := range []string{"ep-001", "ep-004", "ep-010"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "traces", "household-langgraph", name+".json"))
		if err != nil {
			return nil, 0, err
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			return nil, 0, err
		}
		tds = append(tds, td)
	}
	out := make([][]byte, n)
	spans := 0
	for i := range out {
		td := ptrace.NewTraces()
		tds[i%len(tds)].CopyTo(td)
		household.AsNewEpisode(td, i)
		spans += td.SpanCount()
		raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			return nil, 0, err
		}
		out[i] = raw
	}
	return out, spans, nil
}

// sink takes the collector's exports and counts the spans.
type sink struct {
	addr  string
	spans atomic.Int64
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{addr: ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err == nil {
			s.spans.Add(int64(req.Traces().SpanCount()))
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	mux.HandleFunc("/v1/logs", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	go func() { _ = http.Serve(ln, mux) }()
	return s, nil
}

// cpuOf is a process's user plus system CPU time so far.
func cpuOf(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name (which may hold spaces) in parentheses.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}
