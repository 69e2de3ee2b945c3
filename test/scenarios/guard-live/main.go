// SPDX-License-Identifier: Apache-2.0

// Command guard-live measures agentguard's pre-call guard on a real agent
// SDK: the live app (examples/live/app: Google ADK for TypeScript, the
// paper's three agents on a scripted model) plays n conversations of each
// kind through the built otelcol-agentguard (examples/weather/guard.yaml:
// the weather assertions judged on arrival, answering the riskendpoint's
// decisions with enforce: deny), once per mode:
//
//	none  no guard: the app as it is
//	deny  the agentguard plugin (guard.js) asks before every tool call and
//	      transfer, and a denied one does not run
//
// The scripted model's mistakes are the app's faulty kinds. A self-transfer
// (self-hello, self-goodbye: an agent calls transfer_to_agent naming itself)
// is a call the hook sees before it runs: the guard must keep it from
// running. Keeping control (keeps-control: the greeting agent never hands
// back) is the absence of a call: only te1's end-of-conversation verdict sees
// it, and no pre-call hook can prevent it; it is reported, not failed on.
//
// It prints, per mode and kind, the conversations played and completed
// (every turn as scripted, to the final answer), those with a deny, the
// self-transfers that ran, those that kept control to the end, and those
// the collector's verdicts caught. It exits 1 when a correct conversation
// got a deny, when in deny mode a self-transfer ran, or when the app failed
// or left a conversation without its outcome. Everything stays in -out/MODE.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
)

func main() {
	var o options
	flag.StringVar(&o.collector, "collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary (make dist)")
	flag.StringVar(&o.config, "config", "examples/weather/guard.yaml", "the collector configuration: on_arrival, risk_endpoint, enforce: deny")
	flag.StringVar(&o.app, "app", "examples/live/app", "the live app's folder (npm ci done)")
	flag.StringVar(&o.out, "out", "dist/guard-live", "where each mode's files are kept, in a folder of its own (emptied first)")
	flag.IntVar(&o.n, "n", 20, "conversations of each kind, per mode")
	flag.IntVar(&o.concurrency, "concurrency", 4, "conversations the app plays at once")
	flag.DurationVar(&o.groupTimeout, "group-timeout", 2*time.Second, "AGENTGUARD_GROUP_TIMEOUT: a conversation ends this long after its last span")
	flag.DurationVar(&o.bspDelay, "bsp-delay", 20*time.Millisecond, "OTEL_BSP_SCHEDULE_DELAY of the app's batch span processors")
	flag.Parse()
	var results []result
	for _, mode := range modes {
		r, err := o.play(os.Stdout, mode)
		if err != nil {
			fmt.Fprintln(os.Stderr, "guard-live:", err)
			os.Exit(2)
		}
		results = append(results, r)
	}
	if !report(os.Stdout, results) {
		os.Exit(1)
	}
}

// modes are the runs compared: without the guard, then with it.
var modes = []string{"none", "deny"}

// kinds are the app's conversation kinds, in the table's order.
var kinds = []string{"strong", "self-hello", "self-goodbye", "keeps-control"}

type options struct {
	collector, config, app, out string
	n, concurrency              int
	groupTimeout, bspDelay      time.Duration
}

// settle is how long past group_timeout the end-of-conversation verdicts
// can take (a tick of the processor's clock, then the export).
const settle = 3 * time.Second

// outcome is the app's line for one conversation.
type outcome struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Completed bool       `json:"completed"`
	Error     string     `json:"error"`
	Ran       []ran      `json:"ran"`
	Decisions []decision `json:"decisions"`
}

type ran struct {
	Agent string         `json:"agent"`
	Tool  string         `json:"tool"`
	Args  map[string]any `json:"args"`
}

type decision struct {
	Decision string `json:"decision"`
	Error    string `json:"error"`
}

// selfTransfers are the transfers that ran from an agent to itself.
func (o outcome) selfTransfers() int {
	n := 0
	for _, r := range o.Ran {
		if r.Tool == "transfer_to_agent" && r.Args["agentName"] == r.Agent {
			n++
		}
	}
	return n
}

// keptControl: the greeting agent got control and never handed it back.
func (o outcome) keptControl() bool {
	held := false
	for _, r := range o.Ran {
		if r.Tool == "transfer_to_agent" {
			held = r.Args["agentName"] == "greeting_agent"
		}
	}
	return held
}

func (o outcome) count(what string) int {
	n := 0
	for _, d := range o.Decisions {
		if d.Decision == what {
			n++
		}
	}
	return n
}

func (o outcome) guardErrors() int {
	n := 0
	for _, d := range o.Decisions {
		if d.Error != "" {
			n++
		}
	}
	return n
}

// result is one mode's run.
type result struct {
	mode     string
	outcomes []outcome
	caught   map[string]bool // conversations with a temporalcheck fail verdict
	problems []string
}

// play runs one mode: a sink and the collector on free loopback ports, the
// app, then the wait for the conversations to end and their verdicts.
func (o options) play(w io.Writer, mode string) (result, error) {
	res := result{mode: mode, caught: map[string]bool{}}
	dir, err := filepath.Abs(filepath.Join(o.out, mode))
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
			"AGENTGUARD_WARM_UP=0s",
		}})
	if err != nil {
		return res, err
	}
	defer col.Stop()
	guard := ""
	if mode == "deny" {
		guard = "http://" + risk
	}
	fmt.Fprintf(w, "mode %s: otelcol-agentguard on %s, decisions on %s (%s); the app's guard %q; files in %s\n",
		mode, otlp, risk, o.config, guard, dir)
	stdout, appErr := o.runApp(otlp, guard, dir)
	if appErr != nil {
		res.problems = append(res.problems, appErr.Error()+" (its own lines above)")
	}
	if res.outcomes, err = parseOutcomes(stdout, filepath.Join(dir, "outcomes.jsonl")); err != nil {
		return res, err
	}
	if got, want := len(res.outcomes), o.n*len(kinds); got != want {
		res.problems = append(res.problems, fmt.Sprintf("the app reported %d conversations of %d", got, want))
	}
	time.Sleep(o.groupTimeout + settle)
	sink.WaitQuiet(time.Second, 20*time.Second)
	if err := col.Alive(); err != nil {
		return res, err
	}
	for _, r := range sink.Received() {
		a := r.Record.Attributes().AsRaw()
		if a[verdictattr.Check] == verdictattr.CheckTemporal && a[verdictattr.ScoreLabel] == verdictattr.LabelFail {
			g, _ := a[verdictattr.Group].(string)
			res.caught[g] = true
		}
	}
	return res, nil
}

// runApp plays the conversations, with the guard asking url when it is not
// empty, and returns the app's stdout (its lines also go to stderr, with
// its own).
func (o options) runApp(otlp, url, dir string) ([]byte, error) {
	cmd := exec.Command("node", "main.js", "--endpoint", "http://"+otlp+"/v1/traces", "--out", dir,
		"--n", strconv.Itoa(o.n), "--concurrency", strconv.Itoa(o.concurrency))
	cmd.Dir = o.app
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	cmd.Env = harness.AppEnv("OTEL_BSP_SCHEDULE_DELAY=" + strconv.FormatInt(o.bspDelay.Milliseconds(), 10))
	if url != "" {
		cmd.Env = append(cmd.Env, "AGENTGUARD_DECISIONS="+url, "AGENTGUARD_ON_ERROR=allow")
	}
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("the live app (%s): %w", o.app, err)
	}
	return stdout.Bytes(), nil
}

// parseOutcomes reads the app's outcome lines (its other stdout lines,
// ADK's log, are skipped) and keeps them in path.
func parseOutcomes(stdout []byte, path string) ([]outcome, error) {
	var out []outcome
	var kept bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(`{"id":`)) {
			continue
		}
		var o outcome
		if err := json.Unmarshal(line, &o); err != nil {
			return nil, fmt.Errorf("the app's outcome line %q: %w", line, err)
		}
		out = append(out, o)
		kept.Write(line)
		kept.WriteByte('\n')
	}
	return out, errors.Join(sc.Err(), os.WriteFile(path, kept.Bytes(), 0o644))
}

// row is one mode and kind in the table.
type row struct {
	played, completed, denied, selfRan, kept, caught, guardErrors int
}

// report prints the table and the failures, and says whether the run passed.
func report(w io.Writer, results []result) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tkind\tplayed\tcompleted\twith a deny\tself-transfers ran\tkept control to the end\tcaught by verdicts\tguard errors\t")
	var failures []string
	for _, res := range results {
		for _, p := range res.problems {
			failures = append(failures, res.mode+": "+p)
		}
		rows := map[string]*row{}
		for _, k := range kinds {
			rows[k] = &row{}
		}
		for _, o := range res.outcomes {
			r, ok := rows[o.Kind]
			if !ok {
				failures = append(failures, fmt.Sprintf("%s: %s is of no kind known (%q)", res.mode, o.ID, o.Kind))
				continue
			}
			r.played++
			denied := o.count("deny") > 0
			r.completed += b2i(o.Completed)
			r.denied += b2i(denied)
			r.selfRan += o.selfTransfers()
			r.kept += b2i(o.keptControl())
			r.caught += b2i(res.caught[o.ID])
			r.guardErrors += o.guardErrors()
			if o.Kind == "strong" && denied {
				failures = append(failures, fmt.Sprintf("%s: the correct conversation %s got a deny", res.mode, o.ID))
			}
			if res.mode == "deny" && o.selfTransfers() > 0 {
				failures = append(failures, fmt.Sprintf("deny: in %s a self-transfer ran, which the guard sees before it runs", o.ID))
			}
			if !o.Completed {
				failures = append(failures, fmt.Sprintf("%s: %s did not complete: %s", res.mode, o.ID, o.Error))
			}
		}
		for _, k := range kinds {
			r := rows[k]
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", res.mode, k, r.played, r.completed, r.denied, r.selfRan, r.kept, r.caught, r.guardErrors)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "self-transfers (self-hello, self-goodbye) are calls a pre-call hook sees: none may run with the guard.")
	fmt.Fprintln(w, "keeping control (keeps-control) is a call never made: no pre-call hook prevents it; te1's verdict at the conversation's end reports it.")
	for _, f := range failures {
		fmt.Fprintln(w, "FAIL:", f)
	}
	if len(failures) > 0 {
		fmt.Fprintln(w, "guard-live: FAIL")
		return false
	}
	fmt.Fprintln(w, "guard-live: PASS")
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
