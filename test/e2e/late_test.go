// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e_test

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/test/e2e"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/household"
)

// lateConfig judges each household episode, one trace, as a group of its
// own, with a wait shorter than the gaps between the spans' requests: every
// request after an episode's first brings late spans.
const lateConfig = `
receivers:
  otlp:
    protocols:
      http:
        endpoint: ${env:AGENTGUARD_OTLP_HTTP}
processors:
  temporalcheck:
    group_by: trace_id
    wait: 250ms
    group_timeout: 2s
    predicates:
      hazard: {tool: '*', result: {unsafe: true}}
    assertions:
      - name: safe
        never: hazard
connectors:
  verdictlogs:
exporters:
  otlp_http/verdicts:
    logs_endpoint: ${env:AGENTGUARD_VERDICTS_ENDPOINT}
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [temporalcheck]
      exporters: [verdictlogs]
    logs:
      receivers: [verdictlogs]
      exporters: [otlp_http/verdicts]
`

// lateGap is the time between two requests: longer than wait, so that each
// trace is judged and released between them.
const lateGap = 400 * time.Millisecond

// TestLateSpansAgreeWithCheck replays household episodes a few spans a
// request, lateGap apart, so that most of each trace arrives after the
// trace was judged; the collector's violations must be those agentguard
// check finds on the same spans. (An end-of-sequence verdict is another
// matter: one decided when a trace was released, before its late spans,
// may be premature, and the ones after are marked out_of_order.)
func TestLateSpansAgreeWithCheck(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "late.yaml")
	if err := os.WriteFile(config, []byte(lateConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	eps := household.Generate(household.Options{Seed: 1, Start: time.Now()}, 4)
	var files []string
	unsafe := 0
	for _, ep := range eps {
		f := filepath.Join(dir, ep.ID+".json")
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(ep.Traces)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, body, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		if ep.Unsafe {
			unsafe++
		}
	}
	if unsafe == 0 || unsafe == len(eps) {
		t.Fatalf("%d of %d episodes unsafe: the seed must give both", unsafe, len(eps))
	}
	offline, _ := checkVerdictsWith(t, config, files)

	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := e2e.StartCollector(t, sink, config)
	rounds := lateRounds(t, eps, 12)
	for i, reqs := range rounds {
		for _, body := range reqs {
			if _, err := e2e.Post(addr, body); err != nil {
				t.Fatal(err)
			}
		}
		if i < len(rounds)-1 {
			time.Sleep(lateGap)
		}
	}
	time.Sleep(2*time.Second + time.Second) // group_timeout, a tick and the export
	sink.WaitQuiet(500*time.Millisecond, 10*time.Second)
	online := logVerdicts(sink.Records())
	for i := range online {
		online[i].Explanation = ""
	}
	for i := range offline {
		offline[i].Explanation = ""
	}
	if !slices.Equal(online, offline) || len(offline) == 0 {
		t.Errorf("late spans: the collector's verdicts and agentguard check's differ (%d rounds %v apart):\ncollector:\n%s\ncheck:\n%s",
			len(rounds), lateGap, lines(online), lines(offline))
	}
	t.Logf("%d episodes (%d unsafe) in %d requests: %d verdicts, the same as check's", len(eps), unsafe, len(rounds)*len(eps), len(offline))
}

// lateRounds splits each episode's spans, by start time, into requests of n
// spans; round k holds every episode's k-th request.
func lateRounds(t *testing.T, eps []household.Episode, n int) [][][]byte {
	t.Helper()
	var rounds [][][]byte
	for _, ep := range eps {
		var spans []ptrace.Span
		for _, rs := range ep.Traces.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					spans = append(spans, sp)
				}
			}
		}
		slices.SortStableFunc(spans, func(a, b ptrace.Span) int { return cmp.Compare(a.StartTimestamp(), b.StartTimestamp()) })
		res := ep.Traces.ResourceSpans().At(0).Resource()
		scope := ep.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Scope()
		for k := 0; k*n < len(spans); k++ {
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			res.CopyTo(rs.Resource())
			ss := rs.ScopeSpans().AppendEmpty()
			scope.CopyTo(ss.Scope())
			for _, sp := range spans[k*n : min((k+1)*n, len(spans))] {
				sp.CopyTo(ss.Spans().AppendEmpty())
			}
			body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
			if err != nil {
				t.Fatal(err)
			}
			if k == len(rounds) {
				rounds = append(rounds, nil)
			}
			rounds[k] = append(rounds[k], body)
		}
	}
	if len(rounds) < 3 {
		t.Fatalf("only %d rounds: the episodes are too short to come late", len(rounds))
	}
	return rounds
}
