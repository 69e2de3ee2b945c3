// SPDX-License-Identifier: Apache-2.0

// Command guard-live measures agentguard's pre-call guard on real agent
// SDKs: each framework's live app (examples/live: Google ADK for
// TypeScript, LangGraph JS, the OpenAI Agents SDK for JS; the paper's three
// agents on a scripted model) plays n conversations of each kind through the
// built otelcol-agentguard (examples/weather/guard.yaml: the weather
// assertions judged on arrival, answering the riskendpoint's decisions with
// enforce: deny), once per mode:
//
//	none  no guard: the app as it is
//	deny  the app's guard (its guard.js) asks before every tool call and
//	      hand-off, and a denied one does not run
//
// The scripted models make the known mistakes, one kind of conversation
// each: a self-transfer (self-hello, self-goodbye), a second greeting
// (extra-transfer), a city the weather agent does not serve (bad-city), the
// same lookup twice in a row (repeat-weather). Each is a call the hook sees
// before it runs: with the guard none may run. Keeping control
// (keeps-control: the greeting agent never hands back) is the absence of a
// call: only te1's end-of-conversation verdict sees it, and no pre-call hook
// can prevent it; it is reported, not failed on.
//
// It prints, per framework, mode and kind, the conversations played and
// completed (every turn as scripted, to the final answer), those with a
// deny, the mistaken calls that ran, those that kept control to the end,
// those whose expected assertion the collector's verdicts caught, and false
// alarms (a violation on a conversation where what ran broke no rule). It
// exits 1 on a false alarm, when a correct conversation got a deny, when with
// the guard a mistake ran,
// when without it a mistake did not run or its conversation was not caught,
// or when an app failed or left a conversation without its outcome.
// Everything stays in -out/FRAMEWORK/MODE.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
)

func main() {
	var o options
	var frameworks string
	flag.StringVar(&o.collector, "collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary (make dist)")
	flag.StringVar(&o.config, "config", "examples/weather/guard.yaml", "the collector configuration: on_arrival, risk_endpoint, enforce: deny")
	flag.StringVar(&frameworks, "frameworks", strings.Join(allFrameworks, ","), "the frameworks whose apps play (npm ci done in each app's folder)")
	flag.StringVar(&o.out, "out", "dist/guard-live", "where each run's files are kept, in a folder of its own (emptied first)")
	flag.IntVar(&o.n, "n", 20, "conversations of each kind, per framework and mode")
	flag.IntVar(&o.concurrency, "concurrency", 4, "conversations an app plays at once")
	flag.DurationVar(&o.groupTimeout, "group-timeout", 2*time.Second, "AGENTGUARD_GROUP_TIMEOUT: a conversation ends this long after its last span")
	flag.DurationVar(&o.bspDelay, "bsp-delay", 20*time.Millisecond, "OTEL_BSP_SCHEDULE_DELAY of the apps' batch span processors")
	flag.Parse()
	var results []result
	for _, fw := range strings.Split(frameworks, ",") {
		if apps[fw] == "" {
			fmt.Fprintf(os.Stderr, "guard-live: -frameworks: no app for %q (%s)\n", fw, strings.Join(allFrameworks, ", "))
			os.Exit(2)
		}
		for _, mode := range modes {
			r, err := o.play(os.Stdout, fw, mode)
			if err != nil {
				fmt.Fprintln(os.Stderr, "guard-live:", err)
				os.Exit(2)
			}
			results = append(results, r)
		}
	}
	if !report(os.Stdout, results) {
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

// modes are the runs compared: without the guard, then with it.
var modes = []string{"none", "deny"}

type options struct {
	collector, config, out string
	n, concurrency         int
	groupTimeout, bspDelay time.Duration
}

// settle is how long past group_timeout the end-of-conversation verdicts
// can take (a tick of the processor's clock, then the export).
const settle = 3 * time.Second

// result is one framework's run in one mode.
type result struct {
	framework, mode string
	planned         []planned
	outcomes        []outcome
	caught          map[string]map[string]bool // conversation -> assertions with a temporalcheck fail verdict
	problems        []string
}

// play runs one framework in one mode: a sink and the collector on free
// loopback ports, the app, then the wait for the conversations to end and
// their verdicts.
func (o options) play(w io.Writer, fw, mode string) (result, error) {
	res := result{framework: fw, mode: mode}
	dir, err := filepath.Abs(filepath.Join(o.out, fw, mode))
	if err != nil {
		return res, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return res, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	addrs, err := harness.FreeAddrs(2)
	if err != nil {
		return res, err
	}
	otlp, risk := addrs[0], addrs[1]
	sink, err := harness.StartLogSink()
	if err != nil {
		return res, err
	}
	defer sink.Close()
	col, err := harness.StartCollector(harness.CollectorOptions{Bin: o.collector, Configs: []string{o.config},
		Sets: []string{"service::telemetry::metrics::level=none"},
		Log:  filepath.Join(dir, "collector.log"), Env: []string{
			"AGENTGUARD_OTLP_HTTP=" + otlp,
			"AGENTGUARD_RISK_ENDPOINT=" + risk,
			"AGENTGUARD_VERDICTS_ENDPOINT=" + sink.Endpoint(),
			"AGENTGUARD_GROUP_TIMEOUT=" + o.groupTimeout.String(),
		}})
	if err != nil {
		return res, err
	}
	defer col.Stop()
	guard := ""
	if mode == "deny" {
		guard = "http://" + risk
	}
	fmt.Fprintf(w, "%s, mode %s: otelcol-agentguard on %s, decisions on %s (%s); the app's guard %q; files in %s\n",
		fw, mode, otlp, risk, o.config, guard, dir)
	stdout, appErr := o.runApp(apps[fw], otlp, guard, dir)
	if appErr != nil {
		res.problems = append(res.problems, appErr.Error()+" (its own lines above)")
	}
	if res.planned, err = readPlanned(filepath.Join(dir, "conversations.jsonl")); err != nil {
		return res, err
	}
	if res.outcomes, err = parseOutcomes(stdout, filepath.Join(dir, "outcomes.jsonl")); err != nil {
		return res, err
	}
	if got, want := len(res.outcomes), len(res.planned); got != want {
		res.problems = append(res.problems, fmt.Sprintf("the app reported %d conversations of %d", got, want))
	}
	time.Sleep(o.groupTimeout + settle)
	sink.WaitQuiet(time.Second, 20*time.Second)
	res.caught = caught(sink)
	return res, col.Alive()
}

// caught are the temporalcheck violations the sink received: per
// conversation, the assertions violated.
func caught(sink *harness.LogSink) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, r := range sink.Received() {
		a := r.Record.Attributes().AsRaw()
		if a[verdictattr.Check] != verdictattr.CheckTemporal || a[verdictattr.ScoreLabel] != verdictattr.LabelFail {
			continue
		}
		g, _ := a[verdictattr.Group].(string)
		name, _ := a[verdictattr.EvaluationName].(string)
		if out[g] == nil {
			out[g] = map[string]bool{}
		}
		out[g][name] = true
	}
	return out
}

// runApp plays the conversations, with the guard asking url when it is not
// empty, and returns the app's stdout (its lines also go to stderr, with
// its own).
func (o options) runApp(app, otlp, url, dir string) ([]byte, error) {
	cmd := exec.Command("node", "main.js", "--endpoint", "http://"+otlp+"/v1/traces", "--out", dir,
		"--n", strconv.Itoa(o.n), "--concurrency", strconv.Itoa(o.concurrency))
	cmd.Dir = app
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	cmd.Env = harness.AppEnv("OTEL_BSP_SCHEDULE_DELAY=" + strconv.FormatInt(o.bspDelay.Milliseconds(), 10))
	if url != "" {
		cmd.Env = append(cmd.Env, "AGENTGUARD_DECISIONS="+url, "AGENTGUARD_ON_ERROR=allow")
	}
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("the %s app: %w", app, err)
	}
	return stdout.Bytes(), nil
}
