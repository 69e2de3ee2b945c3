// SPDX-License-Identifier: Apache-2.0

package harness

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
