package collectorproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpansPassedOn(t *testing.T) {
	log := strings.Join([]string{
		"2026-12-02T06:43:33.902Z\tinfo\tTraces\t{\"otelcol.component.id\": \"debug\", \"resource spans\": 2, \"spans\": 11}",
		"2026-12-02T06:43:33.902Z\tinfo\tLogs\t{\"otelcol.component.id\": \"debug/verdicts\", \"log records\": 1}",
		"Expected xferToWeather at event 3; came execute_tool transfer_to_agent [xferToGreeting].",
		"2026-12-02T06:43:33.917Z\tinfo\tTraces\t{\"otelcol.component.id\": \"debug\", \"resource spans\": 7, \"spans\": 33}",
	}, "\n")
	path := filepath.Join(t.TempDir(), "collector.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := SpansPassedOn(path); err != nil || n != 44 {
		t.Errorf("SpansPassedOn = %d, %v; want 44", n, err)
	}
	if err := os.WriteFile(path, []byte("Everything is ready\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SpansPassedOn(path); err == nil {
		t.Error("a log without the debug exporter's lines counted as 0 spans, want an error")
	}
}

// script writes an executable shell script standing in for a collector.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "otelcol")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStartReadyThenStop(t *testing.T) {
	bin := script(t, `echo "$@" >&2; echo "$COLOR"; echo "Everything is ready. Begin running and processing data." >&2; exec sleep 30`)
	p, err := Start(Options{Bin: bin, Configs: []string{"a.yaml", "b.yaml"}, Sets: []string{"x=1"}, Env: []string{"COLOR=blue"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Alive(); err != nil {
		t.Fatalf("a ready collector reported as exited: %v", err)
	}
	p.Stop()
	if p.Alive() == nil {
		t.Error("a stopped collector reported alive")
	}
	b, _ := os.ReadFile(p.Log())
	if !strings.Contains(string(b), "--config a.yaml --config b.yaml --set x=1") || !strings.Contains(string(b), "blue") {
		t.Errorf("the collector was not given its arguments and environment; its log:\n%s", b)
	}
}

func TestStartQuotesTheCollectorsError(t *testing.T) {
	bin := script(t, `echo "some line"; echo "Error: cannot start pipelines: listen tcp 127.0.0.1:1: bind: permission denied" >&2; exit 1`)
	_, err := Start(Options{Bin: bin})
	if err == nil || !strings.Contains(err.Error(), "Error: cannot start pipelines") || strings.Contains(err.Error(), "some line") {
		t.Errorf("Start = %v; want the collector's Error line alone", err)
	}
	if _, err := Start(Options{Bin: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing binary started")
	}
}

func TestFreeAddrsDiffer(t *testing.T) {
	addrs, err := FreeAddrs(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] || !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("FreeAddrs(5) = %v: want 5 different loopback addresses", addrs)
		}
		seen[a] = true
	}
}
