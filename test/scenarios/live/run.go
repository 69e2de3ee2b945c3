// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// What the live app leaves in its output folder.
const (
	spansFile         = "spans.jsonl"         // OTLP/JSON requests, one a line, in export order
	exportsFile       = "exports.jsonl"       // each export to the collector: when answered, outcome, spans
	conversationsFile = "conversations.jsonl" // each conversation played
	verdictsFile      = "verdicts.jsonl"      // the harness's: the collector's verdict records
)

// conversation is one played conversation; its ID is its
// gen_ai.conversation.id, the collector's group. Expect is the assertion
// that must catch it ("" for a correct one).
type conversation struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Expect string `json:"expect"`
}

func (c conversation) faulty() bool { return c.Expect != "" }

// spanRef names a span: its trace ID, then its span ID, in hex.
type spanRef [2]string

// export is one export to the collector, as the app logged it once the
// collector had answered.
type export struct {
	AtMs  float64   `json:"at_ms"`
	OK    bool      `json:"ok"`
	Error string    `json:"error"`
	Spans []spanRef `json:"spans"`
}

func (e export) at() time.Time {
	return time.Unix(0, int64(math.Round(e.AtMs*1e6))) // to within 256 ns
}

// run is what the live app played and exported.
type run struct {
	convs     []conversation
	fileSpans []spanRef         // the file's spans, in its order
	exports   []export          // in the order they were answered
	traceConv map[string]string // trace ID -> its conversation, from gen_ai.conversation.id
	toolCalls []toolCall        // the execute_tool spans, in the file's order
}

// toolCall is a tool call's span: its trace, its start and end times.
type toolCall struct {
	traceID    string
	start, end time.Time
}

func readRun(dir string) (*run, error) {
	r := &run{traceConv: map[string]string{}}
	if err := readJSONLines(filepath.Join(dir, conversationsFile), func(b []byte) error {
		var c conversation
		err := json.Unmarshal(b, &c)
		r.convs = append(r.convs, c)
		return err
	}); err != nil {
		return nil, err
	}
	if err := readJSONLines(filepath.Join(dir, exportsFile), func(b []byte) error {
		var e export
		err := json.Unmarshal(b, &e)
		r.exports = append(r.exports, e)
		return err
	}); err != nil {
		return nil, err
	}
	var u ptrace.JSONUnmarshaler
	err := readJSONLines(filepath.Join(dir, spansFile), func(b []byte) error {
		td, err := u.UnmarshalTraces(b)
		if err != nil {
			return err
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					tid := s.TraceID().String()
					r.fileSpans = append(r.fileSpans, spanRef{tid, s.SpanID().String()})
					if v, ok := s.Attributes().Get("gen_ai.tool.name"); ok && strings.HasPrefix(s.Name(), "execute_tool ") && v.Str() != "(merged tools)" {
						r.toolCalls = append(r.toolCalls, toolCall{tid, s.StartTimestamp().AsTime(), s.EndTimestamp().AsTime()})
					}
					if v, ok := s.Attributes().Get("gen_ai.conversation.id"); ok && r.traceConv[tid] == "" {
						r.traceConv[tid] = v.Str()
					}
				}
			}
		}
		return nil
	})
	return r, err
}

// readJSONLines calls each with every non-empty line of the file.
func readJSONLines(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 256*1024*1024)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := each(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// sentSpans are the spans the collector took, in the order it took them.
func (r *run) sentSpans() []spanRef {
	var out []spanRef
	for _, e := range r.exports {
		if e.OK {
			out = append(out, e.Spans...)
		}
	}
	return out
}

// problems are the ways the run cannot be judged as it should: exports the
// collector refused, a file that does not hold exactly the spans the
// collector took in the order it took them, traces of no conversation played.
func (r *run) problems() []string {
	var out []string
	for i, e := range r.exports {
		if !e.OK {
			out = append(out, fmt.Sprintf("export %d (%d spans) was refused: %s", i+1, len(e.Spans), e.Error))
		}
	}
	sent := r.sentSpans()
	if !slices.Equal(sent, r.fileSpans) {
		i := 0
		for i < min(len(sent), len(r.fileSpans)) && sent[i] == r.fileSpans[i] {
			i++
		}
		out = append(out, fmt.Sprintf("the collector took %d spans, the file holds %d; they differ from span %d on", len(sent), len(r.fileSpans), i+1))
	}
	played := map[string]bool{}
	for _, c := range r.convs {
		played[c.ID] = true
	}
	orphans := 0
	for _, s := range r.fileSpans {
		if !played[r.traceConv[s[0]]] {
			orphans++
		}
	}
	if orphans > 0 {
		out = append(out, fmt.Sprintf("%d spans are in traces of no conversation played", orphans))
	}
	return out
}

// exportTimes are, for each trace, when the collector answered the export
// of its last span, and for each conversation, when it answered each export
// of its spans (in order).
func (r *run) exportTimes() (lastByTrace map[string]time.Time, byConv map[string][]time.Time) {
	lastByTrace, byConv = map[string]time.Time{}, map[string][]time.Time{}
	for _, e := range r.exports {
		at := e.at()
		for _, s := range e.Spans {
			if at.After(lastByTrace[s[0]]) {
				lastByTrace[s[0]] = at
			}
			conv := r.traceConv[s[0]]
			if ts := byConv[conv]; len(ts) == 0 || at.After(ts[len(ts)-1]) {
				byConv[conv] = append(ts, at)
			}
		}
	}
	return lastByTrace, byConv
}

// ties counts, over all conversations, the tool calls that started in the
// same millisecond as another of their conversation's (ADK for TypeScript's
// start times are whole milliseconds: only the order received orders them),
// and those that end times would put in another place than start times and
// the order received do (the JS SDK's end times are each early by their own
// fraction of a millisecond).
func (r *run) ties() (sameMillisecond, misorderedByEnd, all int) {
	byConv := map[string][]toolCall{}
	for _, c := range r.toolCalls {
		conv := r.traceConv[c.traceID]
		byConv[conv] = append(byConv[conv], c)
	}
	for _, calls := range byConv {
		all += len(calls)
		slices.SortStableFunc(calls, func(a, b toolCall) int { return a.start.Compare(b.start) })
		byEnd := slices.Clone(calls)
		slices.SortStableFunc(byEnd, func(a, b toolCall) int { return a.end.Compare(b.end) })
		for i, c := range calls {
			if (i > 0 && calls[i-1].start.Equal(c.start)) || (i+1 < len(calls) && calls[i+1].start.Equal(c.start)) {
				sameMillisecond++
			}
			if byEnd[i] != c {
				misorderedByEnd++
			}
		}
	}
	return sameMillisecond, misorderedByEnd, all
}
