// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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

// settle is how long past group_timeout the last verdict can take: the
// configuration's wait (2s) bounds when a trace is released, then a tick and
// the export.
const settle = 3 * time.Second

// result is one framework's run.
type result struct {
	framework string
	planned   []planned
	outcomes  map[string]outcome // by conversation
	spans     *spanFile
	collector []verdict // temporalcheck violations the sink received
	check     []verdict // agentguard check's findings on spans.jsonl
	problems  []string  // what keeps the run from being judged
}

// planned is a conversation the app was to play (its conversations.jsonl).
type planned struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Expect string `json:"expect"`
}

// outcome is an app's line for one conversation.
type outcome struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Completed bool   `json:"completed"`
	Error     string `json:"error"`
	Ran       []struct {
		Tool       string         `json:"tool"`
		Args       map[string]any `json:"args"`
		TransferTo string         `json:"transfer_to"`
	} `json:"ran"`
}

// verdict is what the collector and check must agree on, the span included.
type verdict struct {
	Assertion  string `json:"assertion"`
	Group      string `json:"group"`
	Verdict    string `json:"verdict"`
	StartEvent int64  `json:"start_event"`
	EndEvent   int64  `json:"end_event"`
	SpanID     string `json:"span_id"`
	SpanName   string `json:"span_name"`
	shutdown   bool   // the collector's, received once it was shutting down
}

func (v verdict) String() string {
	return fmt.Sprintf("%s %d-%d at %s (%s)", v.Assertion, v.StartEvent, v.EndEvent, v.SpanID, v.SpanName)
}

// key is what must be equal between the collector's verdict and check's.
func (v verdict) key() string {
	return fmt.Sprintf("%s|%s|%s|%d|%d|%s", v.Group, v.Assertion, v.Verdict, v.StartEvent, v.EndEvent, v.SpanID)
}

// play runs one framework: a sink and the collector, the app, the wait for
// the verdicts, then check on the app's spans.
func (o options) play(w io.Writer, fw, otlp string) (result, error) {
	res := result{framework: fw}
	dir, err := filepath.Abs(filepath.Join(o.out, fw))
	if err != nil {
		return res, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return res, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	sink, err := harness.StartLogSink()
	if err != nil {
		return res, err
	}
	defer sink.Close()
	// Its own metrics off (their default port may be held), its log
	// unsampled (the debug exporter's line for every batch is counted).
	col, err := harness.StartCollector(harness.CollectorOptions{Bin: o.collector, Configs: []string{o.config},
		Sets: []string{"service::telemetry::metrics::level=none", "service::telemetry::logs::sampling::enabled=false"},
		Log:  filepath.Join(dir, "collector.log"), Env: []string{
			"AGENTGUARD_OTLP_HTTP=" + otlp,
			"AGENTGUARD_VERDICTS_ENDPOINT=" + sink.Endpoint(),
			"AGENTGUARD_GROUP_TIMEOUT=" + o.groupTimeout.String(),
		}})
	if err != nil {
		return res, err
	}
	defer col.Stop()
	fmt.Fprintf(w, "%s: otelcol-agentguard on %s (%s); files in %s\n", fw, otlp, o.config, dir)
	t0 := time.Now()
	stdout, appErr := o.runApp(apps[fw], otlp, dir)
	if appErr != nil {
		res.problems = append(res.problems, appErr.Error()+" (its own lines above)")
	}
	fmt.Fprintf(w, "%s: the app played in %s\n", fw, time.Since(t0).Round(time.Millisecond))
	if res.planned, err = readPlanned(filepath.Join(dir, "conversations.jsonl")); err != nil {
		return res, err
	}
	if res.outcomes, err = parseOutcomes(stdout, filepath.Join(dir, "outcomes.jsonl")); err != nil {
		return res, err
	}
	if got, want := len(res.outcomes), len(res.planned); got != want {
		res.problems = append(res.problems, fmt.Sprintf("the app reported %d conversations of %d", got, want))
	}
	if res.spans, err = readSpans(dir); err != nil {
		return res, err
	}
	res.problems = append(res.problems, res.spans.problems()...)
	// Every verdict is on an event (never: nothing waits for the
	// conversation's end), judged once its trace is complete.
	time.Sleep(time.Until(res.spans.lastExport().Add(o.groupTimeout + settle)))
	sink.WaitQuiet(time.Second, 20*time.Second)
	if err := col.Alive(); err != nil {
		return res, err
	}
	stopping := time.Now()
	col.Stop()
	res.collector = fromRecords(sink.Received(), stopping)
	if err := saveVerdicts(filepath.Join(dir, "verdicts.jsonl"), res.collector); err != nil {
		return res, err
	}
	if passed, err := harness.SpansPassedOn(col.Log()); err != nil {
		res.problems = append(res.problems, "counting the spans the collector passed on: "+err.Error())
	} else if sent := len(res.spans.sent()); passed != sent {
		res.problems = append(res.problems, fmt.Sprintf("the collector passed on %d spans; it took %d", passed, sent))
	}
	if res.check, err = o.runCheck(filepath.Join(dir, "spans.jsonl"), filepath.Join(dir, "check.json")); err != nil {
		return res, err
	}
	return res, nil
}

// runApp plays the meter kinds and returns the app's stdout (its other
// lines go to stderr).
func (o options) runApp(app, otlp, dir string) ([]byte, error) {
	cmd := exec.Command("node", "main.js", "--endpoint", "http://"+otlp+"/v1/traces", "--out", dir,
		"--n", strconv.Itoa(o.n), "--concurrency", strconv.Itoa(o.concurrency), "--kinds", strings.Join(meterKinds, ","))
	cmd.Dir = app
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	cmd.Env = harness.AppEnv("OTEL_BSP_SCHEDULE_DELAY=" + strconv.FormatInt(o.bspDelay.Milliseconds(), 10))
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("the %s app: %w", app, err)
	}
	return stdout.Bytes(), nil
}

// runCheck runs agentguard check on the spans file, its JSON report to
// reportPath and its warnings beside it (.stderr), and reads its
// findings. Exit 1 (violations found) is a result, not an error.
func (o options) runCheck(spans, reportPath string) ([]verdict, error) {
	f, err := os.Create(reportPath)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(o.agentguard, "check", "--config", o.config, "--format", "json", spans)
	cmd.Stdout, cmd.Stderr = f, &stderr
	err = cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		return nil, fmt.Errorf("agentguard check: %w\n%s", err, stderr.String())
	}
	if err := os.WriteFile(strings.TrimSuffix(reportPath, ".json")+".stderr", stderr.Bytes(), 0o644); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(reportPath)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Findings *[]verdict `json:"findings"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", reportPath, err)
	}
	if rep.Findings == nil {
		return nil, fmt.Errorf("%s: no findings list: not the output of agentguard check --format json", reportPath)
	}
	return *rep.Findings, nil
}

// fromRecords are temporalcheck's violations among the sink's records;
// those received after stopping are marked.
func fromRecords(recs []harness.Received, stopping time.Time) []verdict {
	var out []verdict
	for _, r := range recs {
		a := r.Record.Attributes().AsRaw()
		if a[verdictattr.Check] != verdictattr.CheckTemporal || a[verdictattr.ScoreLabel] != verdictattr.LabelFail {
			continue
		}
		s := func(k string) string { v, _ := a[k].(string); return v }
		n := func(k string) int64 { v, _ := a[k].(int64); return v }
		out = append(out, verdict{Assertion: s(verdictattr.EvaluationName), Group: s(verdictattr.Group), Verdict: s(verdictattr.Verdict),
			StartEvent: n(verdictattr.StartEvent), EndEvent: n(verdictattr.EndEvent),
			SpanID: r.Record.SpanID().String(), SpanName: s(verdictattr.SpanName), shutdown: !r.At.Before(stopping)})
	}
	return out
}

// saveVerdicts writes the collector's verdicts as JSON lines, in the order
// they came.
func saveVerdicts(path string, vs []verdict) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readPlanned reads the app's conversations.jsonl.
func readPlanned(path string) ([]planned, error) {
	var out []planned
	err := readJSONLines(path, func(b []byte) error {
		var p planned
		err := json.Unmarshal(b, &p)
		out = append(out, p)
		return err
	})
	return out, err
}

// parseOutcomes reads the app's outcome lines (its other stdout lines, a
// framework's own log, are skipped) and keeps them in path.
func parseOutcomes(stdout []byte, path string) (map[string]outcome, error) {
	out := map[string]outcome{}
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
		out[o.ID] = o
		kept.Write(line)
		kept.WriteByte('\n')
	}
	return out, errors.Join(sc.Err(), os.WriteFile(path, kept.Bytes(), 0o644))
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
