// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"context"
	"encoding/json"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// recordingDecider answers from a table and records the action spans it was
// asked about.
type recordingDecider struct {
	mu     sync.Mutex
	open   bool
	answer Answer
	delay  time.Duration
	asked  []ptrace.Span
	groups []string
	after  []pcommon.SpanID
}

func (d *recordingDecider) Decide(ctx context.Context, q Question) (Answer, error) {
	d.mu.Lock()
	d.asked = append(d.asked, q.Action.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0))
	d.groups = append(d.groups, q.Group)
	d.after = append(d.after, q.AfterSpanID)
	d.mu.Unlock()
	select {
	case <-time.After(d.delay):
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
	a := d.answer
	a.Open = d.open
	return a, nil
}

func post(t *testing.T, url, body string) (int, DecisionResponse, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	var d DecisionResponse
	_ = json.Unmarshal(raw, &d)
	return resp.StatusCode, d, string(raw)
}

func startDecisions(t *testing.T, cfgChange func(*Config)) (*endpoint, string) {
	t.Helper()
	b, url := startEndpointWith(t, cfgChange)
	return b.(*endpoint), url
}

func TestDecisionJoinsTheProcessorsAnswers(t *testing.T) {
	e, url := startDecisions(t, nil)
	p := 0.31
	te := &recordingDecider{open: true, answer: Answer{Events: 3, Matched: []string{"xferToGreeting"},
		Reasons: []Reason{{Processor: "temporalcheck", Assertion: "te1", Effect: Deny, Explanation: "expected sayHello"}}}}
	pg := &recordingDecider{open: true, answer: Answer{Events: 3, History: "partial", Matched: []string{"away"},
		Reasons: []Reason{{Processor: "probguard", PSafe: &p, Effect: Warn, Explanation: "P(stay safe) = 0.31 < 0.7"}}}}
	defer e.Register("temporalcheck", te)()
	defer e.Register("probguard", pg)()
	status, d, raw := post(t, url+"/v1/groups/conv%2F1/decisions", `{"action": {"transfer_to": "greeting_agent"}, "after_span_id": "5ab1d52ffe8645bc"}`)
	if status != http.StatusOK || d.Decision != Deny || len(d.Reasons) != 2 || d.Group == nil || *d.Group != "conv/1" ||
		d.Event != 4 || d.History != "partial" || strings.Join(d.Matched, ",") != "away,xferToGreeting" || d.Stale {
		t.Fatalf("status %d: %s", status, raw)
	}
	if te.after[0].String() != "5ab1d52ffe8645bc" || pg.after[0] != te.after[0] {
		t.Errorf("asked after %v and %v", te.after[0], pg.after[0])
	}
	span := te.asked[0]
	if to, _ := span.Attributes().Get("gen_ai.handoff.to_agent"); to.Str() != "greeting_agent" || te.groups[0] != "conv/1" {
		t.Errorf("the transfer was asked as %v for %q", span.Attributes().AsRaw(), te.groups[0])
	}
}

// An action no predicate reads is allowed, with nothing matched; a group
// no processor holds is allowed with a null group and the reason, or
// denied under on_unknown: deny; its event is 1 (the first of the group the
// action's span will open) only when a processor judged it so.
func TestDecisionOnNothingAndOnUnknownGroups(t *testing.T) {
	for _, onUnknown := range []string{Allow, Deny} {
		e, url := startDecisions(t, func(c *Config) { c.OnUnknown = onUnknown })
		open := &recordingDecider{open: true}
		unregister := e.Register("temporalcheck", open)
		status, d, raw := post(t, url+"/v1/groups/g/decisions", `{"action": {"tool": "get_weather", "arguments": {"city": "Paris"}}}`)
		if status != http.StatusOK || d.Decision != Allow || len(d.Reasons) != 0 || len(d.Matched) != 0 || !strings.Contains(raw, `"matched":[]`) {
			t.Errorf("an open group, nothing matched: %d %s", status, raw)
		}
		if args, _ := open.asked[0].Attributes().Get("gen_ai.tool.call.arguments"); args.Str() != `{"city":"Paris"}` {
			t.Errorf("arguments asked as %q", args.Str())
		}
		unregister()
		judgedNew := &recordingDecider{answer: Answer{New: true}}
		unregister = e.Register("temporalcheck", judgedNew)
		if _, d, raw := post(t, url+"/v1/groups/g/decisions", `{"action": {"tool": "get_weather"}}`); d.Event != 1 || d.Group != nil {
			t.Errorf("judged as a new group's first event: %s, want event 1", raw)
		}
		unregister()
		defer e.Register("temporalcheck", &recordingDecider{})()
		status, d, raw = post(t, url+"/v1/groups/g/decisions", `{"action": {"tool": "get_weather"}}`)
		if status != http.StatusOK || d.Decision != onUnknown || d.Group != nil || !strings.Contains(raw, `"group":null`) || d.Event != 0 ||
			len(d.Reasons) != 1 || !strings.Contains(d.Reasons[0].Explanation, `no processor holds group "g"`) {
			t.Errorf("on_unknown %s: %d %s", onUnknown, status, raw)
		}
	}
}

// A processor that does not answer within max_wait makes the answer stale,
// and the decision follows on_stale.
func TestStaleAnswerFollowsOnStale(t *testing.T) {
	for _, onStale := range []string{Allow, Deny} {
		e, url := startDecisions(t, func(c *Config) { c.MaxWait, c.OnStale = 20*time.Millisecond, onStale })
		defer e.Register("probguard", &recordingDecider{open: true, delay: time.Second})()
		start := time.Now()
		status, d, raw := post(t, url+"/v1/groups/g/decisions", `{"action": {"tool": "x"}}`)
		if status != http.StatusOK || !d.Stale || d.Decision != onStale || time.Since(start) > 900*time.Millisecond {
			t.Errorf("on_stale %s: %d %s after %v", onStale, status, raw, time.Since(start))
		}
	}
}

// Bad input gets a clear refusal, and no processor is asked.
func TestDecisionRefusals(t *testing.T) {
	e, url := startDecisions(t, func(c *Config) { c.MaxRequestBodySize = 1 << 10 })
	d := &recordingDecider{open: true}
	defer e.Register("temporalcheck", d)()
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"action": {"tool": "x"`, 400, "body: unexpected EOF"},
		{`{"action": {"tool": "x", "args": {}}}`, 400, `unknown field \"args\"`},
		{`{"action": {"tool": "x"}, "after_span_id": "5ab1"}`, 400, `after_span_id: \"5ab1\" is not a span ID`},
		{`{"action": {"tool": "x"}, "when": 1}`, 400, `unknown field \"when\"`},
		{`{}`, 400, "action: required"},
		{`{"action": {}}`, 400, "give exactly one of tool, transfer_to and span, got 0"},
		{`{"action": {"tool": "x", "transfer_to": "y"}}`, 400, "got 2"},
		{`{"action": {"transfer_to": "y", "arguments": {}}}`, 400, "arguments go with tool"},
		{`{"action": {"tool": "x", "arguments": [1]}}`, 400, "arguments must be a JSON object"},
		{`{"action": {"span": {"name": 3}}}`, 400, "not an OTLP/JSON span"},
		{`{"action": {"tool": "x"}} {}`, 400, "more follows it"},
		{`{"action": {"tool": "` + strings.Repeat("x", 2000) + `"}}`, 413, "larger than max_request_body_size"},
	} {
		status, _, raw := post(t, url+"/v1/groups/g/decisions", tc.body)
		if status != tc.status || !strings.Contains(raw, tc.want) {
			t.Errorf("%.60s: %d %s, want %d and %q", tc.body, status, raw, tc.status, tc.want)
		}
	}
	if len(d.asked) != 0 {
		t.Errorf("%d refused questions reached a processor", len(d.asked))
	}
	if status, _, raw := get(t, http.MethodGet, url+"/v1/groups/g/decisions"); status != http.StatusMethodNotAllowed {
		t.Errorf("GET of a decision: %d %s", status, raw)
	}
}

// A span given as the action is asked as it is.
func TestDecisionOnAGivenSpan(t *testing.T) {
	e, url := startDecisions(t, nil)
	d := &recordingDecider{open: true}
	defer e.Register("temporalcheck", d)()
	status, _, raw := post(t, url+"/v1/groups/g/decisions",
		`{"action": {"span": {"name": "handoff to weather_agent", "attributes": [{"key": "gen_ai.handoff.to_agent", "value": {"stringValue": "weather_agent"}}]}}}`)
	if status != http.StatusOK || d.asked[0].Name() != "handoff to weather_agent" {
		t.Fatalf("%d %s", status, raw)
	}
}

// Without a processor to answer, a decision is refused, saying what to set.
func TestDecisionWithoutProcessors(t *testing.T) {
	_, url := startDecisions(t, nil)
	status, _, raw := post(t, url+"/v1/groups/g/decisions", `{"action": {"tool": "x"}}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(raw, "set risk_endpoint") {
		t.Errorf("%d %s", status, raw)
	}
}

// A 10 MB body is refused at the default cap (64 KiB) without reaching a
// processor, and a key of slashes and unicode, percent-encoded, arrives
// whole.
func TestDecisionHugeBodyAndOddKeys(t *testing.T) {
	e, url := startDecisions(t, nil)
	d := &recordingDecider{open: true}
	defer e.Register("temporalcheck", d)()
	huge := `{"action": {"tool": "x", "arguments": {"blob": "` + strings.Repeat("x", 10<<20) + `"}}}`
	if status, _, raw := post(t, url+"/v1/groups/g/decisions", huge); status != http.StatusRequestEntityTooLarge {
		t.Errorf("10 MB body: %d %.100s", status, raw)
	}
	key := "tenant/a/conversation é/会话"
	if status, _, raw := post(t, url+"/v1/groups/"+neturl.PathEscape(key)+"/decisions", `{"action": {"tool": "x"}}`); status != http.StatusOK {
		t.Errorf("odd key: %d %s", status, raw)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.groups) != 1 || d.groups[0] != key {
		t.Errorf("groups asked %q, want only %q", d.groups, key)
	}
}
