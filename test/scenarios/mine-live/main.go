// SPDX-License-Identifier: Apache-2.0

// Command mine-live records the conversations agentguard mine is measured
// on (testdata/mining): the weather team of examples/live played by each
// framework's app (Google ADK for TypeScript, LangGraph JS, the OpenAI
// Agents SDK for JS) on its scripted model, correct conversations of eight
// kinds and the six known mistakes (this folder's kinds.js, put in place of
// the apps' own by a module hook), and episodes of the household agent
// (examples/household/agent), safe and unsafe.
//
// The apps export to a sink on a loopback port that takes every request
// (no collector is needed) and write their spans to an OTLP/JSON file,
// which this splits by conversation into good.jsonl and faulty.jsonl
// (household: safe.jsonl and unsafe.jsonl, by the episode's own report). To
// keep the files small, the long attributes (over 256 bytes: prompts,
// message histories) of every span that is not a tool call or a hand-off
// are removed; tool and hand-off spans are kept whole, and each group's
// events, as the default events condition reads them, are checked to be the
// same after as before.
//
//	go run ./test/scenarios/mine-live [-n 3] [-frameworks adk,langgraph,openai-agents] [-household 40] [-household-seed 7] [-out testdata/mining]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/test/harness"
)

// The apps, by the name testdata/mining gives their folder.
var apps = []struct{ name, dir string }{
	{"adk", "examples/live/app"},
	{"langgraph", "examples/live/langgraph"},
	{"openai-agents", "examples/live/openai-agents"},
}

const (
	good   = "strong,strong-paris,strong-tokyo,strong-new-york,no-hello,no-bye,weather-first,no-weather"
	faulty = "self-hello,self-goodbye,keeps-control,extra-transfer,bad-city,repeat-weather"
	// maxAttr: a longer string attribute of a span that is no event is removed
	maxAttr = 256
)

func main() {
	n := flag.Int("n", 3, "conversations of each kind per framework (8 correct kinds, 6 faulty)")
	household := flag.Int("household", 40, "household episodes (0: none)")
	seed := flag.Int("household-seed", 7, "the household episodes' seed")
	out := flag.String("out", "testdata/mining", "where the recordings go, a folder per app")
	frameworks := flag.String("frameworks", "adk,langgraph,openai-agents", "the live apps that play (none: \"\")")
	flag.Parse()
	if err := run(*n, *household, *seed, *out, strings.Split(*frameworks, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "mine-live:", err)
		os.Exit(1)
	}
}

func run(n, household, seed int, out string, frameworks []string) error {
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.Close()
	tmp, err := os.MkdirTemp("", "mine-live")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	register, err := filepath.Abs("test/scenarios/mine-live/register.mjs")
	if err != nil {
		return err
	}
	for _, app := range apps {
		if !slices.Contains(frameworks, app.name) {
			continue
		}
		dir := filepath.Join(tmp, app.name)
		cmd := exec.Command("node", "--import", register, "main.js", "--endpoint", "http://"+sink.Addr().String()+"/v1/traces",
			"--out", dir, "--n", fmt.Sprint(n), "--kinds", good+","+faulty)
		cmd.Dir = app.dir
		cmd.Env = harness.AppEnv("OTEL_BSP_SCHEDULE_DELAY=20")
		cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s (%s, npm ci done there?): %w", app.name, app.dir, err)
		}
		kinds, err := readKinds(filepath.Join(dir, "conversations.jsonl"))
		if err != nil {
			return err
		}
		isGood := func(group string) (string, bool) {
			k, ok := kinds[group]
			if !ok {
				return "", false
			}
			if slices.Contains(strings.Split(good, ","), k) {
				return "good", true
			}
			return "faulty", true
		}
		if err := split(filepath.Join(dir, "spans.jsonl"), filepath.Join(out, app.name), isGood); err != nil {
			return fmt.Errorf("%s: %w", app.name, err)
		}
	}
	if household == 0 {
		return nil
	}
	dir := filepath.Join(tmp, "household")
	cmd := exec.Command("node", "main.js", "--out", dir, "--n", fmt.Sprint(household), "--seed", fmt.Sprint(seed),
		"--concurrency", "4", "--model-latency-ms", "0")
	cmd.Dir = "examples/household/agent"
	cmd.Env = harness.AppEnv()
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("household agent (npm ci done in examples/household/agent?): %w", err)
	}
	unsafe, err := readEpisodes(filepath.Join(dir, "episodes.jsonl"))
	if err != nil {
		return err
	}
	return split(filepath.Join(dir, "spans.jsonl"), filepath.Join(out, "household"), func(group string) (string, bool) {
		u, ok := unsafe[group]
		if !ok {
			return "", false
		}
		if u {
			return "unsafe", true
		}
		return "safe", true
	})
}

// startSink takes every OTLP/HTTP export and answers it with success.
func startSink() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}"))
		}))
	}()
	return l, nil
}

// readKinds reads conversations.jsonl: each conversation's kind.
func readKinds(path string) (map[string]string, error) {
	out := map[string]string{}
	return out, eachLine(path, func(b []byte) error {
		var c struct{ ID, Kind string }
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		out[c.ID] = c.Kind
		return nil
	})
}

// readEpisodes reads the household agent's episodes.jsonl: whether each
// became unsafe.
func readEpisodes(path string) (map[string]bool, error) {
	out := map[string]bool{}
	return out, eachLine(path, func(b []byte) error {
		var e struct {
			ID     string
			Unsafe bool
		}
		if err := json.Unmarshal(b, &e); err != nil {
			return err
		}
		out[e.ID] = e.Unsafe
		return nil
	})
}

func eachLine(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := f(sc.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return sc.Err()
}

// split writes the spans of spans.jsonl (one request a line) to
// dir/CLASS.jsonl by their conversation's class, trimmed, one request a
// line in the order they came; spans of a trace without a conversation, or
// of a conversation classify does not know, are dropped (and counted).
func split(spansPath, dir string, classify func(group string) (string, bool)) error {
	var reqs []ptrace.Traces
	var u ptrace.JSONUnmarshaler
	if err := eachLine(spansPath, func(b []byte) error {
		td, err := u.UnmarshalTraces(b)
		reqs = append(reqs, td)
		return err
	}); err != nil {
		return err
	}
	groupOf := map[string]string{} // trace ID: conversation
	for _, td := range reqs {
		for _, tr := range sequence.Split(td, func(ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) (bool, uint64) { return false, 0 }, sequence.ByConversation) {
			if tr.GroupFound {
				groupOf[tr.ID.String()] = tr.Group
			}
		}
	}
	// which spans stay, and each one's parent among them
	parentOf := map[pcommon.SpanID]pcommon.SpanID{}
	stays := map[pcommon.SpanID]bool{}
	for _, td := range reqs {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					parentOf[sp.SpanID()] = sp.ParentSpanID()
					stays[sp.SpanID()] = kept(sp)
				}
			}
		}
	}
	keptParent := func(id pcommon.SpanID) pcommon.SpanID {
		for p := parentOf[id]; ; p = parentOf[p] {
			if _, known := parentOf[p]; p.IsEmpty() || !known || stays[p] {
				return p
			}
		}
	}
	trimmed := func(td ptrace.Traces) {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if stays[sp.SpanID()] {
						sp.SetParentSpanID(keptParent(sp.SpanID()))
					}
				}
			}
		}
		trim(td)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]*bytes.Buffer{}
	before := map[string][]ptrace.Traces{}
	after := map[string][]ptrace.Traces{}
	dropped := 0
	var m ptrace.JSONMarshaler
	for _, td := range reqs {
		parts := map[string]ptrace.Traces{}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					class, ok := classify(groupOf[sp.TraceID().String()])
					if !ok {
						dropped++
						continue
					}
					part, ok := parts[class]
					if !ok {
						part = ptrace.NewTraces()
						parts[class] = part
					}
					// one resource and scope a span: the request keeps their order
					prs := part.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(prs.Resource())
					prs.SetSchemaUrl(rs.SchemaUrl())
					pss := prs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(pss.Scope())
					pss.SetSchemaUrl(ss.SchemaUrl())
					sp.CopyTo(pss.Spans().AppendEmpty())
				}
			}
		}
		for _, class := range slices.Sorted(maps.Keys(parts)) {
			part := parts[class]
			orig := ptrace.NewTraces()
			part.CopyTo(orig)
			before[class] = append(before[class], orig)
			trimmed(part)
			after[class] = append(after[class], part)
			cp := ptrace.NewTraces()
			part.CopyTo(cp)
			b, err := m.MarshalTraces(compact(cp))
			if err != nil {
				return err
			}
			if files[class] == nil {
				files[class] = &bytes.Buffer{}
			}
			files[class].Write(b)
			files[class].WriteByte('\n')
		}
	}
	for _, class := range slices.Sorted(maps.Keys(files)) {
		same, err := sameEvents(before[class], after[class])
		if err != nil {
			return err
		}
		if !same {
			return fmt.Errorf("%s: trimming changed the events", class)
		}
		path := filepath.Join(dir, class+".jsonl")
		if err := os.WriteFile(path, files[class].Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "mine-live: %s: %d bytes\n", path, files[class].Len())
	}
	if dropped > 0 {
		fmt.Fprintf(os.Stderr, "mine-live: %s: %d spans of no conversation played dropped\n", dir, dropped)
	}
	return nil
}

// compact merges the request's resource and scope entries that are equal
// and follow each other, spans kept in order.
func compact(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	var lastRS ptrace.ResourceSpans
	var lastSS ptrace.ScopeSpans
	have := false
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			if !have || !sameMap(lastRS.Resource().Attributes().AsRaw(), rs.Resource().Attributes().AsRaw()) {
				lastRS = out.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(lastRS.Resource())
				lastRS.SetSchemaUrl(rs.SchemaUrl())
				lastSS = ptrace.ScopeSpans{}
				have = true
			}
			if lastSS == (ptrace.ScopeSpans{}) || lastSS.Scope().Name() != ss.Scope().Name() || lastSS.Scope().Version() != ss.Scope().Version() {
				lastSS = lastRS.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(lastSS.Scope())
				lastSS.SetSchemaUrl(ss.SchemaUrl())
			}
			ss.Spans().MoveAndAppendTo(lastSS.Spans())
		}
	}
	return out
}

func sameMap(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// trim keeps of a request the spans an event or a group can be read from
// (kept): every tool call and hand-off whole; the spans where an agent
// takes control (ADK's invoke_agent, OpenInference's AGENT spans,
// LangGraph's __start__) and each trace's root, without their long
// attributes (over maxAttr bytes: prompts, message histories; LangGraph's
// metadata is kept). The model calls and the framework's inner chains go;
// the caller has set each kept span's parent to its nearest kept ancestor,
// so that ties of start time are settled as before (parents first).
func trim(td ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if !kept(sp) {
					return true
				}
				if !callSpan(sp) {
					sp.Attributes().RemoveIf(func(k string, v pcommon.Value) bool {
						return k != "metadata" && len(v.AsString()) > maxAttr
					})
				}
				return false
			})
		}
	}
}

func kept(sp ptrace.Span) bool { return callSpan(sp) || agentSpan(sp) || sp.ParentSpanID().IsEmpty() }

// agentSpan: where an agent may take control, in any convention.
func agentSpan(sp ptrace.Span) bool {
	a := sp.Attributes()
	if v, ok := a.Get("gen_ai.operation.name"); ok && v.Str() == "invoke_agent" {
		return true
	}
	if v, ok := a.Get("openinference.span.kind"); ok && v.Str() == "AGENT" {
		return true
	}
	return sp.Name() == "__start__" || strings.HasPrefix(sp.Name(), "invoke_agent")
}

// callSpan: a tool call or a hand-off, in any convention.
func callSpan(sp ptrace.Span) bool {
	a := sp.Attributes()
	if _, ok := a.Get("gen_ai.tool.name"); ok {
		return true
	}
	if _, ok := a.Get("tool.name"); ok {
		return true
	}
	if v, ok := a.Get("openinference.span.kind"); ok && v.Str() == "TOOL" {
		return true
	}
	if v, ok := a.Get("gen_ai.operation.name"); ok && (v.Str() == "execute_tool" || v.Str() == "handoff") {
		return true
	}
	return strings.HasPrefix(sp.Name(), "execute_tool")
}

// sameEvents: the default events condition, and every tool and agent the
// spans show as a predicate, read the same events (what they were, their
// arguments and results) from both.
func sameEvents(a, b []ptrace.Traces) (bool, error) {
	read := func(tds []ptrace.Traces) ([]string, error) {
		cp := make([]ptrace.Traces, len(tds))
		for i, td := range tds {
			cp[i] = ptrace.NewTraces()
			td.CopyTo(cp[i])
		}
		var pc predicate.Config
		for _, agent := range []string{"weather_agent_v2", "greeting_agent", "farewell_agent", "household_agent"} {
			pc.Predicates = append(pc.Predicates, predicate.Named{Name: agent, Predicate: predicate.Predicate{Agent: agent}})
		}
		src, err := events.NewSource(pc, sequence.ByConversation, componenttest.NewNopTelemetrySettings())
		if err != nil {
			return nil, err
		}
		groups, _ := src.Groups(cp)
		var out []string
		for _, g := range groups {
			for _, ev := range g.Events {
				out = append(out, fmt.Sprintf("%s %b %s %s", g.Key, ev.Bits, predicate.Describe(ev.Span), attrText(ev.Span)))
			}
		}
		return out, nil
	}
	x, err := read(a)
	if err != nil {
		return false, err
	}
	y, err := read(b)
	if err != nil {
		return false, err
	}
	if len(x) == 0 {
		return false, errors.New("no events")
	}
	if len(x) != len(y) {
		fmt.Fprintf(os.Stderr, "mine-live: %d events before trimming, %d after\n", len(x), len(y))
	}
	for i := range min(len(x), len(y)) {
		if x[i] != y[i] {
			fmt.Fprintf(os.Stderr, "mine-live: the first event that differs:\n  %.400s\n  %.400s\n", x[i], y[i])
			break
		}
	}
	return slices.Equal(x, y), nil
}

// attrText is a call span's attributes, whole (an agent's span is compared
// by what it is and the predicates that hold there: its long attributes
// are gone).
func attrText(sp ptrace.Span) string {
	if !callSpan(sp) {
		return ""
	}
	b, _ := json.Marshal(sp.Attributes().AsRaw())
	return string(b)
}
