// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/e2e"
	"github.com/agentguard/agentguard/test/harness"
)

// The weather example's waits: a trace is judged root_wait after its root span came (wait
// after its last span when the root is missing).
const (
	rootWait = 100 * time.Millisecond
	wait     = 2 * time.Second
)

// groupTimeout ends a conversation this long after its last turn. Set through
// AGENTGUARD_GROUP_TIMEOUT, as make demo does: the example's own is minutes,
// for users who pause between turns; these scripted users do not.
const groupTimeout = 2 * time.Second

// keepsControl is the commonest real mistake: the greeting agent says hello
// and keeps control to the end (testdata/README.md). Its conversation id.
const (
	keepsControlFile = "testdata/greeting-keeps-control.jsonl"
	keepsControlConv = "c41d7e2a-5b0f-4a8e-9d36-0e7f5b2a9c14"
)

// conversations are the files of each conversation, in the order an agent
// would send them: real recordings of Google ADK (Python and TypeScript) and
// the greeting agent that keeps control.
var conversations = [][]string{
	{"../../testdata/traces/adk-weather/adk-good-42-0.json", "../../testdata/traces/adk-weather/adk-good-42-1.json"},
	{"../../testdata/traces/adk-weather/adk-bad-43-0.json", "../../testdata/traces/adk-weather/adk-bad-43-1.json"},
	{"../../testdata/traces/adk-js/strong-run-01.json"},
	{"../../testdata/traces/adk-js/weak-run-05.json"},
	{"../../testdata/traces/adk-js/parallel-goodbye.json"},
	{keepsControlFile},
}

// verdict is what both paths must agree on.
type verdict struct {
	Assertion, Group, Verdict, Label string
	Start, End                       int64
	TraceID                          string
	Explanation                      string
}

func (v verdict) String() string {
	return fmt.Sprintf("%s %s %s (%s) events %d-%d trace %s", v.Group, v.Assertion, v.Verdict, v.Label, v.Start, v.End, v.TraceID)
}

func sortVerdicts(vs []verdict) {
	slices.SortFunc(vs, func(a, b verdict) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Assertion, b.Assertion),
			cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
	})
}

// want is what every path must find in these conversations: te1 twice in
// each run of the paper's mistake (at the self-transfer, then across the
// turn), te2 where the farewell agent says goodbye twice in one reply and does
// not hand back, and te1 at the end of the conversation whose greeting agent
// keeps control.
var want = []string{
	"90f22af8-441c-410a-90c1-6ebc480c3414 te2 failure (fail) events 1-3",
	"b83c0688-0ed8-4c80-a6c0-7c91eead38cb te1 failure (fail) events 1-3",
	"b83c0688-0ed8-4c80-a6c0-7c91eead38cb te1 failure (fail) events 3-4",
	keepsControlConv + " te1 failure (fail) events 1-2",
	"session-194eb3ef te1 failure (fail) events 1-3",
	"session-194eb3ef te1 failure (fail) events 3-4",
}

// TestCollectorAndCheckAgree sends the same OTLP/JSON files through the
// collector (OTLP/HTTP in, verdict log records out) and through the CI gate,
// agentguard check, with the same configuration, and expects the same
// verdicts. The greeting agent that keeps control is decided only when its
// conversation ends, after its spans left the collector: its verdict must
// still arrive, as a WARN record like any other.
func TestCollectorAndCheckAgree(t *testing.T) {
	t.Setenv("AGENTGUARD_GROUP_TIMEOUT", groupTimeout.String())
	var files []string
	for _, c := range conversations {
		files = append(files, c...)
	}
	offline, spanOf := checkVerdicts(t, files)

	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := e2e.StartCollector(t, sink, weatherConfig)
	var last time.Time
	for _, f := range files {
		for _, req := range e2e.Requests(t, f) {
			if last, err = e2e.Post(addr, req); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Every verdict is decided by group_timeout after the last trace is
	// judged; leave a second for the clock's tick and the export.
	time.Sleep(time.Until(last.Add(max(rootWait, wait) + groupTimeout + time.Second)))
	sink.WaitQuiet(500*time.Millisecond, 10*time.Second)
	recs := sink.Records()
	online := logVerdicts(recs)

	if !slices.Equal(online, offline) {
		t.Errorf("the collector's verdict log records and agentguard check differ:\ncollector:\n%s\ncheck:\n%s", lines(online), lines(offline))
	}
	var got []string
	for _, v := range offline {
		got = append(got, strings.TrimSuffix(v.String(), " trace "+v.TraceID))
	}
	if !slices.Equal(got, want) {
		t.Errorf("agentguard check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The verdict decided at the end of the conversation, on a verdict span,
	// carries what a verdict written on an event's span carries.
	end, onSpan := findRecord(recs, keepsControlConv, "te1"), findRecord(recs, "session-194eb3ef", "te1")
	if end == nil || onSpan == nil {
		t.Fatalf("no te1 record for the greeting agent that keeps control (%v) or for the paper's failing run (%v)", end != nil, onSpan != nil)
	}
	if end.SeverityText() != "WARN" || end.SeverityNumber() != plog.SeverityNumberWarn || end.EventName() != verdictattr.EvaluationEvent {
		t.Errorf("end-of-conversation record: severity %s (%d), event %q; want WARN, %s", end.SeverityText(), end.SeverityNumber(), end.EventName(), verdictattr.EvaluationEvent)
	}
	if k, want := attrKeys(end), attrKeys(onSpan); !slices.Equal(k, want) {
		t.Errorf("end-of-conversation record's attributes %v, a span-attached one's %v", k, want)
	}
	if name, _ := end.Attributes().Get(verdictattr.SpanName); name.Str() != "agentguard verdict" {
		t.Errorf("end-of-conversation verdict on span %q, want the verdict span", name.Str())
	}
	// Offline the conversation's last event is still in hand: check writes
	// the verdict on it, in the same trace the collector's verdict span joins.
	if s := spanOf[keepsControlConv+" te1"]; s != "execute_tool say_hello" {
		t.Errorf("agentguard check wrote the end-of-conversation verdict on %q, want the last event, execute_tool say_hello", s)
	}
	if end.Body().Str() == "" || end.TraceID().IsEmpty() || end.SpanID().IsEmpty() {
		t.Errorf("end-of-conversation record without body, trace or span: %q %v %v", end.Body().Str(), end.TraceID(), end.SpanID())
	}
}

// logVerdicts reads the verdicts off the collector's log records.
func logVerdicts(recs []plog.LogRecord) []verdict {
	out := make([]verdict, 0, len(recs))
	for _, r := range recs {
		a := r.Attributes().AsRaw()
		s, _ := a[verdictattr.StartEvent].(int64)
		e, _ := a[verdictattr.EndEvent].(int64)
		out = append(out, verdict{
			Assertion: str(a, verdictattr.EvaluationName), Group: str(a, verdictattr.Group),
			Verdict: str(a, verdictattr.Verdict), Label: str(a, verdictattr.ScoreLabel),
			Start: s, End: e, TraceID: r.TraceID().String(), Explanation: r.Body().Str(),
		})
	}
	sortVerdicts(out)
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// checkVerdicts runs agentguard check --format json over the files with the
// weather agents' configuration. It also returns the span each verdict was
// written on, by "group assertion".
func checkVerdicts(t *testing.T, files []string) ([]verdict, map[string]string) {
	t.Helper()
	return checkVerdictsWith(t, weatherConfig, files)
}

// checkVerdictsWith runs agentguard check --format json over the files with
// a configuration.
func checkVerdictsWith(t *testing.T, config string, files []string) ([]verdict, map[string]string) {
	t.Helper()
	args := append([]string{"check", "--config", config, "--format", "json"}, files...)
	cmd := exec.Command(agentguardBinary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// Exit 1 is "violations found", the expected outcome here.
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("agentguard check: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Findings []struct {
			Assertion, Verdict, Label, Group string
			StartEvent                       int64  `json:"start_event"`
			EndEvent                         int64  `json:"end_event"`
			TraceID                          string `json:"trace_id"`
			SpanName                         string `json:"span_name"`
			Explanation                      string
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("agentguard check --format json: %v\n%s", err, out)
	}
	vs := make([]verdict, 0, len(rep.Findings))
	spans := map[string]string{}
	for _, f := range rep.Findings {
		vs = append(vs, verdict{Assertion: f.Assertion, Group: f.Group, Verdict: f.Verdict, Label: f.Label,
			Start: f.StartEvent, End: f.EndEvent, TraceID: f.TraceID, Explanation: f.Explanation})
		spans[f.Group+" "+f.Assertion] = f.SpanName
	}
	sortVerdicts(vs)
	return vs, spans
}

// agentguardBinary builds cmd/agentguard: the CI gate as users run it.
func agentguardBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentguard")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/agentguard/agentguard/cmd/agentguard").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/agentguard: %v\n%s", err, out)
	}
	return bin
}

func findRecord(recs []plog.LogRecord, group, assertion string) *plog.LogRecord {
	for i, r := range recs {
		a := r.Attributes().AsRaw()
		if a[verdictattr.Group] == group && a[verdictattr.EvaluationName] == assertion {
			return &recs[i]
		}
	}
	return nil
}

func attrKeys(r *plog.LogRecord) []string {
	return slices.Sorted(maps.Keys(r.Attributes().AsRaw()))
}

func lines(vs []verdict) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("  " + v.String() + "\n")
	}
	return b.String()
}
