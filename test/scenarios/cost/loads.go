// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures/recording"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/household"
)

// load is what a collector is fed: OTLP/HTTP protobuf export requests.
type load struct {
	requests [][]byte
	traceIDs [][]pcommon.TraceID // the traces of each request
	spans    int                 // in all
}

// add encodes td as the load's next request.
func (l *load) add(td ptrace.Traces) error {
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return err
	}
	l.requests = append(l.requests, raw)
	l.traceIDs = append(l.traceIDs, traceIDs(td))
	l.spans += td.SpanCount()
	return nil
}

func traceIDs(td ptrace.Traces) []pcommon.TraceID {
	var ids []pcommon.TraceID
	seen := map[pcommon.TraceID]bool{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if id := sp.TraceID(); !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

// householdLoad is n requests, each a recorded episode (names in turn) made
// a new trace in a new LangGraph thread, as the agent would send them.
func householdLoad(n int, names []string) (*load, error) {
	tds, err := recorded("household-langgraph", names)
	if err != nil {
		return nil, err
	}
	l := &load{}
	for i := range n {
		td := ptrace.NewTraces()
		tds[i%len(tds)].CopyTo(td)
		household.AsNewEpisode(td, i)
		if err := l.add(td); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// weatherLoad is n requests, each a conversation of ADK for TypeScript's
// weather team as it exported it (two turns, two traces), the correct run
// and the failing one in turn, made a new conversation.
func weatherLoad(n int) (*load, error) {
	tds, err := recorded("adk-js", []string{"strong-run-01", "weak-run-05"})
	if err != nil {
		return nil, err
	}
	l := &load{}
	for i := range n {
		td := ptrace.NewTraces()
		tds[i%len(tds)].CopyTo(td)
		recording.Renumber(td, i, fmt.Sprintf("conversation-%d", i), sequence.ConversationKeys()...)
		if err := l.add(td); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// recorded reads testdata/traces/<dir>/<name>.json for each name.
func recorded(dir string, names []string) ([]ptrace.Traces, error) {
	var tds []ptrace.Traces
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join("testdata", "traces", dir, name+".json"))
		if err != nil {
			return nil, err
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, name, err)
		}
		tds = append(tds, td)
	}
	return tds, nil
}

// groupsLoad is g open conversation groups, perRequest a request: each
// group one turn, a single say_hello call.
func groupsLoad(g, perRequest int) (*load, error) {
	l := &load{}
	for n := 0; n < g; n += perRequest {
		td := ptrace.NewTraces()
		for i := n; i < min(n+perRequest, g); i++ {
			groupTrace(i).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		}
		if err := l.add(td); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// groupTrace is one turn of conversation n, built as
// processor/temporalcheck's TestOpenGroupCost builds it, so that the RSS
// measured here and the heap that test bounds are of the same groups.
func groupTrace(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, byte(n), byte(n >> 8), byte(n >> 16), 9, 9, 9, 9, byte(n), byte(n >> 8), byte(n >> 16)})
	sp.SetSpanID(pcommon.SpanID{1, byte(n), byte(n >> 8), byte(n >> 16)})
	sp.SetName("execute_tool say_hello")
	sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + n))
	sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + n + 1000))
	sp.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	sp.Attributes().PutStr("gen_ai.tool.name", "say_hello")
	sp.Attributes().PutStr("gen_ai.conversation.id", fmt.Sprintf("conversation-%06d", n))
	return td
}

// sendPaced posts the requests one after another, request i at the start
// plus i times every (at once when the collector took longer), calling
// before(i), if not nil, just before request i is sent, and retried(n), if
// not nil, with the times it was refused and sent again: a steady load well
// below what saturates the collector.
func sendPaced(addr string, requests [][]byte, every time.Duration, before, retried func(int)) error {
	began := time.Now()
	for i, body := range requests {
		time.Sleep(time.Until(began.Add(time.Duration(i) * every)))
		if before != nil {
			before(i)
		}
		n, err := harness.PostTracesRetrying(addr, body)
		if retried != nil {
			retried(n)
		}
		if err != nil {
			return fmt.Errorf("request %d of %d: %w", i+1, len(requests), err)
		}
	}
	return nil
}
