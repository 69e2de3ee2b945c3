// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/processor/temporalcheck"
)

// conversations is n copies of the paper's failing run (two traces of one
// conversation), each with its own trace IDs and conversation.
func conversations(b *testing.B, n int) []ptrace.Traces {
	b.Helper()
	tds, err := readTraceFiles([]string{traceFile("adk-weather/adk-bad-43-0.json"), traceFile("adk-weather/adk-bad-43-1.json")})
	if err != nil {
		b.Fatal(err)
	}
	var out []ptrace.Traces
	for k := range n {
		for _, td := range tds {
			c := ptrace.NewTraces()
			td.CopyTo(c)
			for _, rs := range c.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						id := sp.TraceID()
						id[0], id[1] = byte(k), byte(k>>8)
						sp.SetTraceID(pcommon.TraceID(id))
						for _, key := range []string{"gen_ai.conversation.id", "gcp.vertex.agent.session_id"} {
							if v, ok := sp.Attributes().Get(key); ok {
								sp.Attributes().PutStr(key, fmt.Sprintf("%s-%d", v.Str(), k))
							}
						}
					}
				}
			}
			out = append(out, c)
		}
	}
	return out
}

func weatherProcessor(b *testing.B) (component.ID, *temporalcheck.Config, func([]ptrace.Traces) []ptrace.Traces) {
	f := temporalcheck.NewFactory()
	id, raw, err := processorConfig(weatherConfig, "", f)
	if err != nil {
		b.Fatal(err)
	}
	return id, raw.(*temporalcheck.Config), func(tds []ptrace.Traces) []ptrace.Traces {
		sink, _, err := runProcessor(f, id, raw, tds, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		return sink.AllTraces()
	}
}

// The baseline: the processor's own run over 500 conversations (1000
// traces, 9500 spans), as check runs it.
func BenchmarkCheckProcessor(b *testing.B) {
	_, _, run := weatherProcessor(b)
	in := conversations(b, 500)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		tds := make([]ptrace.Traces, len(in))
		for i, td := range in {
			tds[i] = ptrace.NewTraces()
			td.CopyTo(tds[i])
		}
		b.StartTimer()
		run(tds)
	}
}

// What check adds to it: the replay that lists pending verdicts over the
// same released traces, read as they came.
func BenchmarkCheckReplay(b *testing.B) {
	id, cfg, run := weatherProcessor(b)
	in := conversations(b, 500)
	received := copyTraces(in)
	released := run(in)
	b.ReportAllocs()
	for b.Loop() {
		r, err := replayCheck(id, cfg, released, received)
		if err != nil || r.violations != 1000 {
			b.Fatalf("%v, %d violations", err, r.violations)
		}
	}
}
