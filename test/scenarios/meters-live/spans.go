// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// What the harness reads of the spans, by convention, to say where each
// violation must land, independently of agentguard's own readers: a tool
// call is an OpenInference TOOL span (tool.name, its arguments in
// input.value) or a GenAI execute_tool span (gen_ai.tool.name, ADK's
// arguments in gcp.vertex.agent.tool_call_args); a model call's tokens are
// GenAI's gen_ai.usage.input_tokens and output_tokens or OpenInference's
// llm.token_count.prompt and completion.
var (
	argKeys    = []string{"gcp.vertex.agent.tool_call_args", "gen_ai.tool.call.arguments", "input.value"}
	resultKeys = []string{"gcp.vertex.agent.tool_response", "gen_ai.tool.call.result", "output.value"}
	tokenKeys  = [][2]string{{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"}, {"llm.token_count.prompt", "llm.token_count.completion"}}
)

// span is what the harness reads of one span.
type span struct {
	traceID, spanID, name string
	start                 pcommon.Timestamp
	index                 int // its place in the file
	// a tool call's
	tool                string
	args                string // the raw attribute text
	argsKey, resultKey  string // the attributes that carried them
	tokens              int64  // a model call's input plus output tokens
	tokenKey            string // the pair that carried them
	hasTokens, toolCall bool
}

// spanFile is an app's spans.jsonl and exports.jsonl.
type spanFile struct {
	spans     []span
	traceConv map[string]string // trace ID -> conversation (session.id or gen_ai.conversation.id on a span of it)
	exports   []export
}

// export is one export to the collector, as the app logged it once the
// collector had answered.
type export struct {
	AtMs  float64     `json:"at_ms"`
	OK    bool        `json:"ok"`
	Error string      `json:"error"`
	Spans [][2]string `json:"spans"`
}

func readSpans(dir string) (*spanFile, error) {
	f := &spanFile{traceConv: map[string]string{}}
	if err := readJSONLines(filepath.Join(dir, "exports.jsonl"), func(b []byte) error {
		var e export
		err := json.Unmarshal(b, &e)
		f.exports = append(f.exports, e)
		return err
	}); err != nil {
		return nil, err
	}
	var u ptrace.JSONUnmarshaler
	err := readJSONLines(filepath.Join(dir, "spans.jsonl"), func(b []byte) error {
		td, err := u.UnmarshalTraces(b)
		if err != nil {
			return err
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					f.add(s)
				}
			}
		}
		return nil
	})
	return f, err
}

func (f *spanFile) add(s ptrace.Span) {
	attrs := s.Attributes()
	str := func(k string) string {
		v, ok := attrs.Get(k)
		if !ok {
			return ""
		}
		return v.AsString()
	}
	sp := span{traceID: s.TraceID().String(), spanID: s.SpanID().String(), name: s.Name(), start: s.StartTimestamp(), index: len(f.spans)}
	for _, k := range []string{"session.id", "gen_ai.conversation.id"} {
		if c := str(k); c != "" && f.traceConv[sp.traceID] == "" {
			f.traceConv[sp.traceID] = c
		}
	}
	switch {
	case str("agentguard.decision") == "deny":
	case str("openinference.span.kind") == "TOOL":
		sp.toolCall, sp.tool = true, str("tool.name")
	case str("gen_ai.operation.name") == "execute_tool" && str("gen_ai.tool.name") != "(merged tools)":
		sp.toolCall, sp.tool = true, str("gen_ai.tool.name")
	}
	if sp.toolCall {
		sp.argsKey, sp.args = firstOf(attrs, argKeys)
		sp.resultKey, _ = firstOf(attrs, resultKeys)
	}
	for _, pair := range tokenKeys {
		in, okIn := number(attrs, pair[0])
		out, okOut := number(attrs, pair[1])
		if okIn || okOut {
			sp.tokens, sp.tokenKey, sp.hasTokens = in+out, pair[0]+" + "+pair[1], true
			break
		}
	}
	f.spans = append(f.spans, sp)
}

func firstOf(attrs pcommon.Map, keys []string) (key, value string) {
	for _, k := range keys {
		if v, ok := attrs.Get(k); ok {
			return k, v.AsString()
		}
	}
	return "", ""
}

func number(attrs pcommon.Map, key string) (int64, bool) {
	v, ok := attrs.Get(key)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		return int64(v.Double()), true
	}
	return 0, false
}

// conversation is a conversation's spans in sequence order: by start, then
// by their place in the file (the order they ended, as SDK batch processors
// queue them).
func (f *spanFile) conversation(id string) []span {
	var out []span
	for _, s := range f.spans {
		if f.traceConv[s.traceID] == id {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b span) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.index, b.index)) })
	return out
}

// sent are the spans the collector took, in the order it took them.
func (f *spanFile) sent() [][2]string {
	var out [][2]string
	for _, e := range f.exports {
		if e.OK {
			out = append(out, e.Spans...)
		}
	}
	return out
}

// lastExport is when the collector answered the last export.
func (f *spanFile) lastExport() time.Time {
	var last time.Time
	for _, e := range f.exports {
		if at := time.Unix(0, int64(math.Round(e.AtMs*1e6))); at.After(last) {
			last = at
		}
	}
	return last
}

// problems are the ways the run cannot be judged: exports refused, a file
// that does not hold exactly the spans the collector took in that order,
// spans of no conversation.
func (f *spanFile) problems() []string {
	var out []string
	for i, e := range f.exports {
		if !e.OK {
			out = append(out, fmt.Sprintf("export %d (%d spans) was refused: %s", i+1, len(e.Spans), e.Error))
		}
	}
	sent := f.sent()
	file := make([][2]string, len(f.spans))
	for i, s := range f.spans {
		file[i] = [2]string{s.traceID, s.spanID}
	}
	if !slices.Equal(sent, file) {
		out = append(out, fmt.Sprintf("the collector took %d spans, the file holds %d, not the same in the same order", len(sent), len(file)))
	}
	orphans := 0
	for _, s := range f.spans {
		if f.traceConv[s.traceID] == "" {
			orphans++
		}
	}
	if orphans > 0 {
		out = append(out, fmt.Sprintf("%d spans are in traces of no conversation", orphans))
	}
	return out
}
