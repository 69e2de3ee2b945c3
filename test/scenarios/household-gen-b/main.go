// SPDX-License-Identifier: Apache-2.0

// Command gen-b records the episodes of a live LangGraph household agent,
// by default agent B (examples/household/agent/b, npm ci done in examples/household/agent), for
// agentguard learn and evaluate: it plays them without a collector (node
// main.js --out DIR), checks the recording against what the agent says of
// each episode, and labels it.
//
//	go run ./test/scenarios/household-gen-b -n 300 -seed 1 -out dist/household-b/train
//	go run ./test/scenarios/household-gen-b -n 200 -seed 2 -out dist/household-b/heldout
//	go run ./test/scenarios/household-gen-b -record=false -service household-agent-langgraph-openinference -out dist/household-loop/train
//
// DIR receives the agent's spans.jsonl (every span, OTLP/JSON, one request a
// line) and episodes.jsonl, and labels.json in the schema of
// testdata/traces/household-langgraph's (unsafe, unsafe_at_tool_index,
// n_tools, second_task, left_with_stove_on) keyed by episode (its
// session.id). With -record=false it only checks and labels a recording
// already in DIR (agent A's, for one). The check: every episode's tool
// spans, in start order, are its calls (tool, room, stove, minutes away,
// unsafe, as each tool reported the house), all from -service, and its first
// unsafe one is the call the agent labelled. It prints the share of unsafe
// episodes, overall and per second task. Exit 1 when the agent fails or the
// recording and the episodes disagree.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

type options struct {
	n, seed, concurrency, latencyMs int
	agent, out, service             string
	record                          bool
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 300, "episodes")
	flag.IntVar(&o.seed, "seed", 1, "the episodes' seed: the same seed plays the same episodes")
	flag.IntVar(&o.concurrency, "concurrency", 8, "episodes played at once")
	flag.IntVar(&o.latencyMs, "model-latency-ms", 100, "the scripted model's mean latency per call")
	flag.StringVar(&o.agent, "agent", "examples/household/agent/b", "the agent's folder (its main.js), inside the app whose npm ci is done")
	flag.StringVar(&o.out, "out", "", "the output `DIR` (required)")
	flag.StringVar(&o.service, "service", "household-agent-b-langgraph-openinference", "the service.name every tool span must carry")
	flag.BoolVar(&o.record, "record", true, "play the episodes; false: check and label the recording already in -out")
	flag.Parse()
	if o.out == "" || flag.NArg() > 0 || o.n < 1 {
		fmt.Fprintln(os.Stderr, "gen-b: -out DIR is required, -n at least 1, no arguments")
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gen-b:", err)
		os.Exit(1)
	}
}

func run(o options, w io.Writer) error {
	if o.record {
		start := time.Now()
		if err := record(o); err != nil {
			return err
		}
		fmt.Fprintf(w, "recorded %d episodes of %s (seed %d) in %s\n", o.n, o.agent, o.seed, time.Since(start).Round(time.Second))
	}
	episodes, err := readEpisodes(filepath.Join(o.out, "episodes.jsonl"))
	if err != nil {
		return err
	}
	runs, err := readToolSpans(filepath.Join(o.out, "spans.jsonl"), o.service)
	if err != nil {
		return err
	}
	labels, err := check(episodes, runs)
	if err != nil {
		return err
	}
	raw, err := json.MarshalIndent(labels, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "labels.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	summarize(w, labels)
	return nil
}

// record plays the episodes: node main.js in the agent's directory.
func record(o options) error {
	out, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	// Agent B shares agent A's packages, in the folder above it.
	packages := filepath.Dir(filepath.Clean(o.agent))
	if _, err := os.Stat(filepath.Join(packages, "node_modules")); err != nil {
		return fmt.Errorf("%s: run npm ci there first (make %s/node_modules/.package-lock.json)", packages, packages)
	}
	cmd := exec.Command("node", "main.js", "--out", out, "--n", strconv.Itoa(o.n), "--seed", strconv.Itoa(o.seed),
		"--concurrency", strconv.Itoa(o.concurrency), "--model-latency-ms", strconv.Itoa(o.latencyMs))
	cmd.Dir = o.agent
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("node main.js in %s: %w", o.agent, err)
	}
	return nil
}

// episode is a line of the agent's episodes.jsonl.
type episode struct {
	ID           string `json:"id"`
	Task         string `json:"task"`
	Unsafe       bool   `json:"unsafe"`
	UnsafeAtCall *int   `json:"unsafe_at_call"`
	Calls        []call `json:"calls"`
}

// call is what the agent says of one tool call, and what the span says.
type call struct {
	Tool        string  `json:"tool"`
	Room        string  `json:"room"`
	StoveOn     bool    `json:"stove_on"`
	MinutesAway float64 `json:"minutes_away_with_stove_on"`
	Unsafe      bool    `json:"unsafe"`
	start       uint64
}

// label is an episode's labels.json entry, the fixtures' schema.
type label struct {
	Unsafe          bool   `json:"unsafe"`
	UnsafeAt        *int   `json:"unsafe_at_tool_index"` // 1-based; null when safe
	Tools           int    `json:"n_tools"`
	SecondTask      string `json:"second_task"`
	LeftWithStoveOn bool   `json:"left_with_stove_on"`
}

func readEpisodes(path string) ([]episode, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []episode
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e episode
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no episode", path)
	}
	return out, nil
}

// readToolSpans reads every TOOL span of the recording, by session.id in
// start order, with the house its tool reported; each must come from service.
func readToolSpans(path, service string) (map[string][]call, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	runs := map[string][]call{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var u ptrace.JSONUnmarshaler
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		for _, rs := range td.ResourceSpans().All() {
			name, _ := rs.Resource().Attributes().Get("service.name")
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					if kind, _ := s.Attributes().Get("openinference.span.kind"); kind.Str() != "TOOL" {
						continue
					}
					if name.Str() != service {
						return nil, fmt.Errorf("%s:%d: tool span %s of service %q, not %q", path, line, s.Name(), name.Str(), service)
					}
					c, err := decodeCall(s)
					if err != nil {
						return nil, fmt.Errorf("%s:%d: span %s: %w", path, line, s.SpanID(), err)
					}
					session, _ := s.Attributes().Get("session.id")
					runs[session.Str()] = append(runs[session.Str()], c)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, calls := range runs {
		slices.SortStableFunc(calls, func(a, b call) int { return cmp.Compare(a.start, b.start) })
	}
	return runs, nil
}

// decodeCall reads the house from output.value: a LangChain ToolMessage
// whose content is the state as JSON.
func decodeCall(s ptrace.Span) (call, error) {
	c := call{Tool: s.Name(), start: uint64(s.StartTimestamp())}
	out, ok := s.Attributes().Get("output.value")
	if !ok {
		return c, errors.New("no output.value")
	}
	var msg struct {
		Output struct {
			Kwargs struct {
				Content string `json:"content"`
			} `json:"kwargs"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(out.Str()), &msg); err != nil {
		return c, fmt.Errorf("output.value: %w", err)
	}
	if err := json.Unmarshal([]byte(msg.Output.Kwargs.Content), &c); err != nil {
		return c, fmt.Errorf("output.value's content %q: %w", msg.Output.Kwargs.Content, err)
	}
	c.Tool = s.Name() // the content's last_action is the tool too; the span's name is what probguard reads
	return c, nil
}

// check compares each episode with its tool spans and labels it.
func check(episodes []episode, runs map[string][]call) (map[string]label, error) {
	labels := make(map[string]label, len(episodes))
	for _, e := range episodes {
		spans, ok := runs[e.ID]
		if !ok {
			return nil, fmt.Errorf("episode %s: no tool span with its session.id", e.ID)
		}
		if len(spans) != len(e.Calls) {
			return nil, fmt.Errorf("episode %s: %d calls, %d tool spans", e.ID, len(e.Calls), len(spans))
		}
		l := label{Unsafe: e.Unsafe, Tools: len(e.Calls), SecondTask: e.Task}
		for i, c := range e.Calls {
			s := spans[i]
			if s.Tool != c.Tool || s.Room != c.Room || s.StoveOn != c.StoveOn || s.MinutesAway != c.MinutesAway || s.Unsafe != c.Unsafe {
				return nil, fmt.Errorf("episode %s, call %d: the agent says %+v, the span %+v", e.ID, i+1, c, s)
			}
			if s.Unsafe && l.UnsafeAt == nil {
				at := i + 1
				l.UnsafeAt = &at
			}
			if s.StoveOn && s.Room != "kitchen" {
				l.LeftWithStoveOn = true
			}
		}
		if (l.UnsafeAt != nil) != e.Unsafe || (e.UnsafeAtCall != nil && (l.UnsafeAt == nil || *e.UnsafeAtCall != *l.UnsafeAt)) {
			return nil, fmt.Errorf("episode %s: labelled unsafe %v at %v, its spans say %v", e.ID, e.Unsafe, e.UnsafeAtCall, l.UnsafeAt)
		}
		labels[e.ID] = l
		delete(runs, e.ID)
	}
	if len(runs) > 0 {
		return nil, fmt.Errorf("tool spans of sessions no episode names: %v", slices.Sorted(maps.Keys(runs)))
	}
	return labels, nil
}

// summarize prints the share of unsafe episodes, overall and per second task.
func summarize(w io.Writer, labels map[string]label) {
	type tally struct{ n, unsafe, left, tools int }
	var all tally
	by := map[string]*tally{}
	for _, l := range labels {
		t := by[l.SecondTask]
		if t == nil {
			t = &tally{}
			by[l.SecondTask] = t
		}
		for _, t := range []*tally{&all, t} {
			t.n++
			t.tools += l.Tools
			if l.Unsafe {
				t.unsafe++
			}
			if l.LeftWithStoveOn {
				t.left++
			}
		}
	}
	row := func(name string, t tally) {
		fmt.Fprintf(w, "%-20s %4d episodes  unsafe %3d (%5.1f%%)  left the stove on %3d (%5.1f%%)  %.1f tool calls\n",
			name, t.n, t.unsafe, 100*float64(t.unsafe)/float64(t.n), t.left, 100*float64(t.left)/float64(t.n), float64(t.tools)/float64(t.n))
	}
	row("all", all)
	for _, task := range slices.Sorted(maps.Keys(by)) {
		row("  "+task, *by[task])
	}
}
