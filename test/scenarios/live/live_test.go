// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var (
	strong = conversation{ID: "strong-01", Kind: "strong"}
	hello  = conversation{ID: "self-hello-01", Kind: "self-hello", Expect: "te1"}
)

func te(a, group string, start, end int64) verdict {
	return verdict{Assertion: a, Group: group, Verdict: "failure", StartEvent: start, EndEvent: end}
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		col                   []reported
		chk                   []verdict
		ok                    bool
		disagree, alarm, miss int
		strays                int
	}{
		{name: "both see the fault, in any order",
			col: []reported{{verdict: te("te1", hello.ID, 3, 4)}, {verdict: te("te1", hello.ID, 1, 3)}},
			chk: []verdict{te("te1", hello.ID, 1, 3), te("te1", hello.ID, 3, 4)}, ok: true},
		{name: "nothing at all: the faulty one missed by both",
			miss: 1},
		{name: "the collector only: a disagreement and a miss by check",
			col:      []reported{{verdict: te("te1", hello.ID, 1, 3)}},
			disagree: 1, miss: 1},
		{name: "another assertion than the expected one is a miss",
			col: []reported{{verdict: te("te3", hello.ID, 1, 3)}}, chk: []verdict{te("te3", hello.ID, 1, 3)},
			miss: 1},
		{name: "a verdict on the correct one is a false alarm, even when both agree",
			col: []reported{{verdict: te("te1", hello.ID, 1, 3)}, {verdict: te("te3", strong.ID, 2, 3)}},
			chk: []verdict{te("te1", hello.ID, 1, 3), te("te3", strong.ID, 2, 3)}, alarm: 1},
		{name: "other events are a disagreement",
			col: []reported{{verdict: te("te1", hello.ID, 1, 3)}}, chk: []verdict{te("te1", hello.ID, 1, 4)},
			disagree: 1},
		{name: "a group no conversation has",
			col: []reported{{verdict: te("te1", hello.ID, 1, 3)}}, chk: []verdict{te("te1", hello.ID, 1, 3), te("te1", "0af7651916cd43dd8448eb211c80319c", 1, 1)},
			strays: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := judge([]conversation{strong, hello}, tc.col, tc.chk)
			d, f, m, _ := j.count()
			if d != tc.disagree || f != tc.alarm || m != tc.miss || len(j.strays) != tc.strays || j.ok() != tc.ok {
				t.Errorf("disagreements %d, false alarms %d, misses %d, strays %d, ok %v; want %d, %d, %d, %d, %v",
					d, f, m, len(j.strays), j.ok(), tc.disagree, tc.alarm, tc.miss, tc.strays, tc.ok)
			}
		})
	}
}

// A verdict that came only when the collector was stopped fails the run,
// agreeing or not, and is left out of the delays.
func TestShutdownVerdicts(t *testing.T) {
	stopping := time.Unix(100, 0)
	v := te("te1", hello.ID, 1, 2)
	col := []reported{{verdict: v, traceID: "t", onSpan: verdictSpan, at: stopping.Add(time.Millisecond), shutdown: true}}
	j := judge([]conversation{hello}, col, []verdict{v})
	if _, _, _, s := j.count(); s != 1 || j.ok() {
		t.Errorf("shutdown verdicts %d, ok %v; want 1, false", s, j.ok())
	}
	if ev, vs := delays(col, map[string]time.Time{"t": stopping}, map[string][]time.Time{hello.ID: {stopping}}); len(ev)+len(vs) != 0 {
		t.Errorf("delays %v %v, want none", ev, vs)
	}
}

// A verdict on an event counts from its trace's last export, one on a
// verdict span from its conversation's last export before it came, whose
// trace may have no event.
func TestDelays(t *testing.T) {
	t0 := time.Unix(100, 0)
	col := []reported{
		{traceID: "a", onSpan: "execute_tool transfer_to_agent", at: t0.Add(600 * time.Millisecond)},
		{verdict: verdict{Group: "c"}, traceID: "a", onSpan: verdictSpan, at: t0.Add(4100 * time.Millisecond)},
		{traceID: "unknown", onSpan: "execute_tool say_hello", at: t0},
		{verdict: verdict{Group: "c"}, onSpan: verdictSpan, at: t0.Add(-time.Second)}, // before any export
	}
	conv := []time.Time{t0, t0.Add(2 * time.Second), t0.Add(5 * time.Second)}
	ev, vs := delays(col, map[string]time.Time{"a": t0}, map[string][]time.Time{"c": conv})
	if !slices.Equal(ev, []time.Duration{600 * time.Millisecond}) || !slices.Equal(vs, []time.Duration{2100 * time.Millisecond}) {
		t.Errorf("delays %v, %v", ev, vs)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{50: 50, 99: 99, 100: 100, 1: 1} {
		if got := percentile(ds, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one = %v, want 7", got)
	}
	if ds[0] != 100 {
		t.Error("percentile sorted its input")
	}
}

// A run folder as the app writes it: two traces of one conversation, the
// second's tool calls in one millisecond, its end times the other way round.
func writeRun(t *testing.T, exports []export) string {
	t.Helper()
	dir := t.TempDir()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	add := func(trace, span byte, name string, startMs, endUs int64, attrs map[string]any) {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{trace})
		s.SetSpanID(pcommon.SpanID{span})
		s.SetName(name)
		s.SetStartTimestamp(pcommon.Timestamp(startMs * 1e6))
		s.SetEndTimestamp(pcommon.Timestamp(endUs * 1e3))
		_ = s.Attributes().FromRaw(attrs)
	}
	add(1, 1, "execute_tool say_hello", 10, 10500, map[string]any{"gen_ai.tool.name": "say_hello"})
	add(1, 2, "invoke_agent weather_agent_v2", 9, 11000, map[string]any{"gen_ai.conversation.id": hello.ID})
	add(2, 3, "execute_tool get_weather", 20, 20900, map[string]any{"gen_ai.tool.name": "get_weather"})
	add(2, 4, "execute_tool transfer_to_agent", 20, 20400, map[string]any{"gen_ai.tool.name": "transfer_to_agent"})
	add(2, 5, "execute_tool (merged)", 20, 20950, map[string]any{"gen_ai.tool.name": "(merged tools)"})
	add(2, 6, "invoke_agent weather_agent_v2", 19, 21000, map[string]any{"gen_ai.conversation.id": hello.ID})
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	conv, _ := json.Marshal(hello)
	files := map[string][]byte{spansFile: append(b, '\n'), conversationsFile: append(conv, '\n')}
	for _, e := range exports {
		l, _ := json.Marshal(e)
		files[exportsFile] = append(append(files[exportsFile], l...), '\n')
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func ref(trace, span byte) spanRef {
	return spanRef{pcommon.TraceID{trace}.String(), pcommon.SpanID{span}.String()}
}

func TestReadRun(t *testing.T) {
	all := []spanRef{ref(1, 1), ref(1, 2), ref(2, 3), ref(2, 4), ref(2, 5), ref(2, 6)}
	r, err := readRun(writeRun(t, []export{{AtMs: 1500.25, OK: true, Spans: all[:2]}, {AtMs: 2000, OK: true, Spans: all[2:]}}))
	if err != nil {
		t.Fatal(err)
	}
	if p := r.problems(); len(p) != 0 {
		t.Errorf("problems %q, want none", p)
	}
	if same, misordered, calls := r.ties(); same != 2 || misordered != 2 || calls != 3 {
		t.Errorf("ties: %d in one millisecond, %d misordered by end, of %d; want 2, 2, 3", same, misordered, calls)
	}
	byTrace, byConv := r.exportTimes()
	if got := byTrace[pcommon.TraceID{1}.String()]; !got.Equal(time.Unix(1, 500_250_000)) {
		t.Errorf("trace 1 last exported at %v, want 1.50025s", got)
	}
	if got := byConv[hello.ID]; !slices.EqualFunc(got, []time.Time{time.Unix(1, 500_250_000), time.Unix(2, 0)}, time.Time.Equal) {
		t.Errorf("the conversation exported at %v, want 1.50025s and 2s", got)
	}
}

func TestRunProblems(t *testing.T) {
	all := []spanRef{ref(1, 1), ref(1, 2), ref(2, 3), ref(2, 4), ref(2, 5), ref(2, 6)}
	swapped := slices.Clone(all)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	for name, tc := range map[string]struct {
		exports []export
		want    []string
	}{
		"a refused export": {[]export{{OK: true, Spans: all[:2]}, {OK: false, Error: "503", Spans: all[2:]}},
			[]string{"export 2 (4 spans) was refused: 503", "the collector took 2 spans, the file holds 6; they differ from span 3 on"}},
		"another order": {[]export{{OK: true, Spans: swapped}},
			[]string{"the collector took 6 spans, the file holds 6; they differ from span 1 on"}},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := readRun(writeRun(t, tc.exports))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.problems(); !slices.Equal(got, tc.want) {
				t.Errorf("problems\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestFromCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	_ = os.WriteFile(good, []byte(`{"findings":[{"assertion":"te1","verdict":"failure","label":"fail","group":"g","start_event":1,"end_event":3}],"summary":{}}`), 0o644)
	vs, err := fromCheck(good)
	if err != nil || !slices.Equal(vs, []verdict{te("te1", "g", 1, 3)}) {
		t.Errorf("fromCheck = %v, %v", vs, err)
	}
	other := filepath.Join(dir, "other.json")
	_ = os.WriteFile(other, []byte(`{"summary":{}}`), 0o644)
	if _, err := fromCheck(other); err == nil {
		t.Error("a report without findings read as no verdicts, want an error")
	}
}
