// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// readTraceFiles reads OTLP/JSON trace files: each one ExportTraceServiceRequest,
// or one request per line (JSON lines, as the collector's file exporter writes).
func readTraceFiles(paths []string) ([]ptrace.Traces, error) {
	var out []ptrace.Traces
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		tds, err := parseTraces(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, tds...)
	}
	return out, nil
}

// readTraceFilesOf is readTraceFiles, and the file each trace came from,
// by trace ID (hex).
func readTraceFilesOf(paths []string) ([]ptrace.Traces, map[string]string, error) {
	var out []ptrace.Traces
	fileOf := map[string]string{}
	for _, path := range paths {
		tds, err := readTraceFiles([]string{path})
		if err != nil {
			return nil, nil, err
		}
		for _, td := range tds {
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						if _, seen := fileOf[sp.TraceID().String()]; !seen {
							fileOf[sp.TraceID().String()] = path
						}
					}
				}
			}
		}
		out = append(out, tds...)
	}
	return out, fileOf, nil
}

func parseTraces(b []byte) ([]ptrace.Traces, error) {
	var u ptrace.JSONUnmarshaler
	lines := jsonLines(b)
	if lines == nil {
		td, err := unmarshalRequest(&u, b)
		if err != nil {
			return nil, err
		}
		return []ptrace.Traces{td}, nil
	}
	out := make([]ptrace.Traces, 0, len(lines))
	for _, l := range lines {
		td, err := unmarshalRequest(&u, l.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", l.number, err)
		}
		out = append(out, td)
	}
	return out, nil
}

// unmarshalRequest reads one ExportTraceServiceRequest. The unmarshaler
// takes any JSON object (unknown fields are skipped), so an object without
// resourceSpans ({}, a labels file) would pass as an empty request and a
// gate over the wrong file would pass: it is refused, saying what it is.
func unmarshalRequest(u *ptrace.JSONUnmarshaler, b []byte) (ptrace.Traces, error) {
	td, err := u.UnmarshalTraces(b)
	if err != nil {
		return td, fmt.Errorf("not an OTLP/JSON ExportTraceServiceRequest: %w", err)
	}
	if td.ResourceSpans().Len() > 0 {
		return td, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return td, fmt.Errorf("not an OTLP/JSON ExportTraceServiceRequest: %w", err)
	}
	if _, ok := top["resourceSpans"]; ok {
		return td, nil // an empty request
	}
	if _, ok := top["resource_spans"]; ok {
		return td, nil
	}
	keys := slices.Sorted(maps.Keys(top))
	return td, fmt.Errorf("not an OTLP/JSON ExportTraceServiceRequest: a JSON object without resourceSpans (its keys: %q)", keys)
}

type line struct {
	number int
	text   []byte
}

// jsonLines splits a JSON-lines file; it returns nil for a file that is one
// JSON document (pretty-printed or not), whose lines are not each valid JSON.
func jsonLines(b []byte) []line {
	var out []line
	for i, text := range bytes.Split(b, []byte("\n")) {
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		if !json.Valid(text) {
			return nil
		}
		out = append(out, line{i + 1, text})
	}
	if len(out) < 2 {
		return nil
	}
	return out
}
