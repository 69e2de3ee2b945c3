// SPDX-License-Identifier: Apache-2.0

// Command meters-live checks agentguard's meter predicates (repeats, budget,
// flows) on real agent SDKs: each framework's live app (examples/live:
// Google ADK for TypeScript, LangGraph JS, the OpenAI Agents SDK for JS)
// plays n conversations of each meter kind (examples/live/shared/kinds.js)
// through the built otelcol-agentguard with examples/live/meters.yaml, its
// own tracing exported over OTLP/HTTP to the collector and to an OTLP/JSON
// file; then `agentguard check` judges the file with the same configuration.
//
// The kinds: loop (the same lookup six times: no_loops at the third),
// overrun (5 000 tokens a model call: token_budget at the call that takes
// the conversation past 20 000), leak (an API key read_file returned, sent
// in an email: no_key_leak at send_email), and the correct varied-calls,
// under-budget, summary and strong.
//
// For each framework and kind it prints the conversations played, those
// caught (exactly one violation, of the kind's assertion, on the span the
// spans file says: the third identical call, the model call that crossed
// the budget, the send_email call), those caught on another span, false
// alarms (any other violation), and disagreements between the collector's
// verdicts and check's (assertion, events and span). It also checks that
// every model call recorded the tokens the script reported, once. It exits
// 1 on a miss, a violation on the wrong span, a false alarm, a
// disagreement, or a run that cannot be judged (an app that failed, an
// export refused, a span the collector and the file do not share).
// Everything stays in -out/FRAMEWORK.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

func main() {
	var o options
	var frameworks string
	flag.StringVar(&o.collector, "collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary (make dist)")
	flag.StringVar(&o.config, "config", "examples/live/meters.yaml", "the collector configuration, also given to agentguard check")
	flag.StringVar(&o.agentguard, "agentguard", "", "the agentguard binary for check (default: go build ./cmd/agentguard into -out)")
	flag.StringVar(&frameworks, "frameworks", strings.Join(allFrameworks, ","), "the frameworks whose apps play (npm ci done in each app's folder)")
	flag.StringVar(&o.out, "out", "dist/meters-live", "where each framework's files are kept, in a folder of its own (emptied first)")
	flag.IntVar(&o.n, "n", 20, "conversations of each kind per framework")
	flag.IntVar(&o.concurrency, "concurrency", 4, "conversations an app plays at once")
	flag.DurationVar(&o.groupTimeout, "group-timeout", 2*time.Second, "AGENTGUARD_GROUP_TIMEOUT: a conversation ends this long after its last span")
	flag.DurationVar(&o.bspDelay, "bsp-delay", 20*time.Millisecond, "OTEL_BSP_SCHEDULE_DELAY of the apps' batch span processors")
	flag.Parse()
	fws := strings.Split(frameworks, ",")
	for _, fw := range fws {
		if apps[fw] == "" {
			fmt.Fprintf(os.Stderr, "meters-live: -frameworks: no app for %q (%s)\n", fw, strings.Join(allFrameworks, ", "))
			os.Exit(2)
		}
	}
	started := time.Now()
	fmt.Printf("meters-live: load %s\n", harness.LoadAvg())
	if err := o.prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "meters-live:", err)
		os.Exit(2)
	}
	// Every port at once: each framework's collector gets its own OTLP/HTTP port.
	addrs, err := harness.FreeAddrs(len(fws))
	if err != nil {
		fmt.Fprintln(os.Stderr, "meters-live:", err)
		os.Exit(2)
	}
	var results []result
	for i, fw := range fws {
		r, err := o.play(os.Stdout, fw, addrs[i])
		if err != nil {
			fmt.Fprintf(os.Stderr, "meters-live: %s: %v\n", fw, err)
			os.Exit(2)
		}
		results = append(results, r)
	}
	ok := report(os.Stdout, results)
	fmt.Printf("meters-live: %d frameworks × %d kinds × %d conversations in %s; load %s\n",
		len(fws), len(meterKinds), o.n, time.Since(started).Round(time.Second), harness.LoadAvg())
	if !ok {
		os.Exit(1)
	}
}

// apps are each framework's live app, the same CLI and outcome lines each.
var apps = map[string]string{
	"adk":           "examples/live/app",
	"langgraph":     "examples/live/langgraph",
	"openai-agents": "examples/live/openai-agents",
}

var allFrameworks = []string{"adk", "langgraph", "openai-agents"}

type options struct {
	collector, config, agentguard, out string
	n, concurrency                     int
	groupTimeout, bspDelay             time.Duration
}

// prepare builds agentguard for check, once, unless one was given: the
// three frameworks' spans are then judged by the same build.
func (o *options) prepare() error {
	if o.agentguard != "" {
		return nil
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	o.agentguard = filepath.Join(out, "agentguard")
	cmd := exec.Command("go", "build", "-o", o.agentguard, "./cmd/agentguard")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/agentguard: %w", err)
	}
	return nil
}
