// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	p, err := StartCollector(CollectorOptions{Bin: bin, Configs: []string{"a.yaml", "b.yaml"}, Sets: []string{"x=1"}, Env: []string{"COLOR=blue"}})
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
	_, err := StartCollector(CollectorOptions{Bin: bin})
	if err == nil || !strings.Contains(err.Error(), "Error: cannot start pipelines") || strings.Contains(err.Error(), "some line") {
		t.Errorf("StartCollector = %v; want the collector's Error line alone", err)
	}
	if _, err := StartCollector(CollectorOptions{Bin: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing binary started")
	}
}
