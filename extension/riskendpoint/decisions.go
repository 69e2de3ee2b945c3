// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A decision is asked for before an action: POST
// /v1/groups/{group}/decisions with the action the agent is about to take.
// Every processor registered here (temporalcheck's assertions, probguard's
// risk) answers what that action would mean for the group, from a copy of
// the group's live state, and the endpoint joins their answers.

// decisionsSuffix ends a decision's URL, after the group key.
const decisionsSuffix = "/decisions"

// The effects an answer's reason can have, and the decisions, from the
// mildest: the decision is the strongest effect of its reasons.
const (
	Allow = "allow"
	Warn  = "warn"
	Deny  = "deny"
)

// Decider is what a processor registers to answer decisions.
type Decider interface {
	// Decide answers what q's action would mean as its group's next spans.
	// It must change nothing, and return an error if ctx ends first.
	Decide(ctx context.Context, q Question) (Answer, error)
}

// Question is one question, as each processor is asked it.
type Question struct {
	Group string
	// AfterSpanID, if set, is a span the agent exported before asking: the
	// answer waits until it is judged.
	AfterSpanID pcommon.SpanID
	// Action is one span, in the conventions the predicates read; each
	// processor has its own copy.
	Action ptrace.Traces
}

// Answer is one processor's answer.
type Answer struct {
	// Open is whether the processor holds the group.
	Open bool
	// New: it does not, and judged the action as the first events of the
	// group the action's span will open (a processor judging spans as they
	// arrive); one that does not has no reasons for a group it does not hold.
	New bool
	// Events is how many events the group has had.
	Events int
	// History is the group's agentguard.history mark, "" when complete.
	History string
	// Matched are the predicates that hold at the action.
	Matched []string
	Reasons []Reason
}

// Reason is why an answer is not a plain allow: one assertion, or one
// probguard processor.
type Reason struct {
	Processor string   `json:"processor"`
	Assertion string   `json:"assertion,omitempty"`
	PSafe     *float64 `json:"p_safe,omitempty"`
	// PSafeLow and PSafeHigh are P_safe's credible interval, where the
	// processor estimates one; with decide_on: lower_bound, PSafeLow is
	// what was compared with Threshold.
	PSafeLow    *float64 `json:"p_safe_low,omitempty"`
	PSafeHigh   *float64 `json:"p_safe_high,omitempty"`
	Threshold   *float64 `json:"threshold,omitempty"`
	Effect      string   `json:"effect"`
	Explanation string   `json:"explanation"`
}

// Registry is what the extension offers processors that answer decisions,
// found among host.GetExtensions() by the component ID of their
// risk_endpoint setting.
type Registry interface {
	// Register adds d under name (the processor's component ID) until
	// unregister is called.
	Register(name string, d Decider) (unregister func())
}

// deciders is the extension's Registry.
type deciders struct {
	mu     sync.RWMutex
	byName map[string]Decider
}

func (r *deciders) Register(name string, d Decider) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]Decider{}
	}
	r.byName[name] = d
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.byName[name] == d {
			delete(r.byName, name)
		}
	}
}

// get is the decider registered under name, or nil.
func (r *deciders) get(name string) Decider {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// all are the deciders, in name order.
func (r *deciders) all() (names []string, ds []Decider) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, name := range slices.Sorted(maps.Keys(r.byName)) {
		names, ds = append(names, name), append(ds, r.byName[name])
	}
	return names, ds
}

// decisionRequest is the body of a question.
type decisionRequest struct {
	Action      *action `json:"action"`
	AfterSpanID string  `json:"after_span_id"`
}

// action is exactly one of a tool call, a transfer, or a span.
type action struct {
	Tool       string          `json:"tool,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	TransferTo string          `json:"transfer_to,omitempty"`
	Span       json.RawMessage `json:"span,omitempty"`
}

// DecisionResponse is what POST /v1/groups/{group}/decisions returns.
type DecisionResponse struct {
	Decision string   `json:"decision"`
	Reasons  []Reason `json:"reasons"`
	// Group is the key asked about; null when no processor holds it.
	Group *string `json:"group"`
	// Event is the number the action would have in its group.
	Event   int      `json:"event,omitempty"`
	Matched []string `json:"matched"`
	// Stale: a processor did not answer within max_wait; the decision then
	// follows on_stale.
	Stale   bool   `json:"stale"`
	History string `json:"history,omitempty"`
}

func (e *endpoint) serveDecision(w http.ResponseWriter, r *http.Request, group string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, problem{fmt.Sprintf("method %s: a decision is asked with POST", r.Method)})
		return
	}
	began := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		status := http.StatusBadRequest
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			status = http.StatusRequestEntityTooLarge
			err = errors.New("larger than max_request_body_size")
		}
		reply(w, status, problem{"body: " + err.Error()})
		return
	}
	q, asked, status, err := readQuestion(bytes.NewReader(body))
	if err != nil {
		reply(w, status, problem{err.Error()})
		return
	}
	q.Group = group
	names, ds := e.deciders.all()
	if len(ds) == 0 {
		reply(w, http.StatusServiceUnavailable, problem{"no processor answers decisions: set risk_endpoint on temporalcheck or probguard"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), e.cfg.MaxWait)
	defer cancel()
	var resp DecisionResponse
	if len(e.cfg.Peers) > 0 && r.Header.Get(forwardedHeader) == "" {
		resp = e.decideInTier(ctx, q, names, ds, body)
	} else {
		resp = e.decide(ctx, q, names, ds)
	}
	reply(w, http.StatusOK, resp)
	e.tell(r.Context(), Decided{Time: began, Group: group, AfterSpanID: q.AfterSpanID, Action: asked, Response: resp, Took: time.Since(began)})
}

// decideInTier asks here and the peers at once (a question asked after a
// span waits here for a span that may never come: the peers' owner must
// not wait behind it), and answers with the one that holds the group:
// here, else a peer; else here's answer (not held, or stale), made stale
// when a peer gave no answer (it may hold the group).
func (e *endpoint) decideInTier(ctx context.Context, q Question, names []string, ds []Decider, body []byte) DecisionResponse {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the side still waiting stops: the other held the group
	type side struct {
		resp   DecisionResponse
		held   bool
		here   bool
		failed []string
	}
	sides := make(chan side, 2)
	go func() { r := e.decide(ctx, q, names, ds); sides <- side{resp: r, held: r.Group != nil, here: true} }()
	go func() {
		r, found, failed := e.askPeers(ctx, q.Group, body)
		sides <- side{resp: r, held: found, failed: failed}
	}()
	var here DecisionResponse
	var failed []string
	for range 2 {
		s := <-sides
		if s.held {
			return s.resp
		}
		if s.here {
			here = s.resp
		} else {
			failed = s.failed
		}
	}
	return e.heldNowhere(q.Group, here, failed)
}

// heldNowhere is here's answer when no peer held the group either, made
// stale when a peer gave no answer.
func (e *endpoint) heldNowhere(group string, here DecisionResponse, failed []string) DecisionResponse {
	if len(failed) > 0 {
		// A peer that gave no answer may hold the group with its history:
		// here's answer, as a new group's, does not count; on_stale decides.
		here.Stale, here.Event = true, 0
		here.Reasons = []Reason{{Processor: "peers", Effect: e.cfg.OnStale,
			Explanation: fmt.Sprintf("no processor here holds group %q and %d of %d peers gave no answer (%s); on_stale is %s",
				group, len(failed), len(e.cfg.Peers), strings.Join(failed, "; "), e.cfg.OnStale)}}
		here.Decision = e.cfg.OnStale
	}
	return here
}

// decide asks every decider at once, each within ctx (max_wait), and joins
// their answers.
func (e *endpoint) decide(ctx context.Context, q Question, names []string, ds []Decider) DecisionResponse {
	group := q.Group
	answers := make([]Answer, len(ds))
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		own := q
		own.Action = ptrace.NewTraces()
		q.Action.CopyTo(own.Action) // a decider may set the group's service.name on it
		wg.Go(func() { answers[i], errs[i] = d.Decide(ctx, own) })
	}
	wg.Wait()
	resp := DecisionResponse{Decision: Allow, Reasons: []Reason{}, Matched: []string{}}
	open, judgedNew := false, false
	for i, a := range answers {
		if errs[i] != nil {
			resp.Stale = true
			resp.Reasons = append(resp.Reasons, Reason{Processor: names[i], Effect: e.cfg.OnStale,
				Explanation: fmt.Sprintf("no answer within max_wait (%v): %v; on_stale is %s", e.cfg.MaxWait, errs[i], e.cfg.OnStale)})
			continue
		}
		// A processor that does not hold the group judged the action as
		// the first events of the new group it will open: its reasons count.
		if a.Open {
			open = true
			resp.Event = max(resp.Event, a.Events+1)
		}
		judgedNew = judgedNew || a.New
		resp.History = worseHistory(resp.History, a.History)
		resp.Reasons = append(resp.Reasons, a.Reasons...)
		for _, m := range a.Matched {
			if !slices.Contains(resp.Matched, m) {
				resp.Matched = append(resp.Matched, m)
			}
		}
	}
	sort.Strings(resp.Matched)
	if open {
		resp.Group = &group
	} else if !resp.Stale {
		if judgedNew {
			resp.Event = 1 // the first of the group its span will open
		}
		resp.Reasons = append(resp.Reasons, Reason{Processor: strings.Join(names, ", "), Effect: e.cfg.OnUnknown,
			Explanation: fmt.Sprintf("no processor holds group %q: it was not seen, or it ended; on_unknown is %s", group, e.cfg.OnUnknown)})
	}
	for _, r := range resp.Reasons {
		resp.Decision = stronger(resp.Decision, r.Effect)
	}
	return resp
}

func stronger(a, b string) string {
	rank := map[string]int{Allow: 0, Warn: 1, Deny: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func worseHistory(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// readQuestion decodes a question's body (but its group), and gives its
// action as asked (JSON), or says what is wrong with it and the status to
// answer.
func readQuestion(body io.Reader) (q Question, asked string, status int, err error) {
	q, status, err = decodeQuestion(body, &asked)
	return q, asked, status, err
}

func decodeQuestion(body io.Reader, asked *string) (Question, int, error) {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	var req decisionRequest
	if err := dec.Decode(&req); err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return Question{}, http.StatusRequestEntityTooLarge, fmt.Errorf("body: larger than max_request_body_size")
		}
		return Question{}, http.StatusBadRequest, fmt.Errorf("body: %w; want {\"action\": {\"tool\": ..., \"arguments\": {...}}}, {\"action\": {\"transfer_to\": ...}} or {\"action\": {\"span\": <OTLP/JSON span>}}", err)
	}
	if dec.More() {
		return Question{}, http.StatusBadRequest, errors.New("body: one JSON object expected, more follows it")
	}
	if req.Action == nil {
		return Question{}, http.StatusBadRequest, errors.New("action: required")
	}
	var q Question
	if req.AfterSpanID != "" {
		b, err := hex.DecodeString(req.AfterSpanID)
		if err != nil || len(b) != len(q.AfterSpanID) {
			return Question{}, http.StatusBadRequest, fmt.Errorf("after_span_id: %q is not a span ID (16 hex digits)", req.AfterSpanID)
		}
		copy(q.AfterSpanID[:], b)
	}
	td, err := req.Action.traces()
	if err != nil {
		return Question{}, http.StatusBadRequest, err
	}
	q.Action = td
	if b, err := json.Marshal(req.Action); err == nil {
		*asked = string(b)
	}
	return q, 0, nil
}

// traces is the action as one span, written in every convention the
// predicates' shorthands read, so that `tool:` and `transfer_to:` hold
// whatever convention the agent's spans use; a span given is used as it is.
func (a *action) traces() (ptrace.Traces, error) {
	given := 0
	for _, set := range []bool{a.Tool != "", a.TransferTo != "", len(a.Span) > 0} {
		if set {
			given++
		}
	}
	if given != 1 {
		return ptrace.Traces{}, fmt.Errorf("action: give exactly one of tool, transfer_to and span, got %d", given)
	}
	if len(a.Arguments) > 0 && a.Tool == "" {
		return ptrace.Traces{}, errors.New("action: arguments go with tool")
	}
	if len(a.Span) > 0 {
		return spanAction(a.Span)
	}
	if a.TransferTo != "" {
		args, _ := json.Marshal(map[string]string{"agent_name": a.TransferTo})
		td, span := toolSpan("transfer_to_agent", string(args))
		span.Attributes().PutStr("gen_ai.handoff.to_agent", a.TransferTo)
		return td, nil
	}
	args := "{}"
	if len(a.Arguments) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(a.Arguments, &obj); err != nil || obj == nil {
			return ptrace.Traces{}, errors.New("action: arguments must be a JSON object")
		}
		var b bytes.Buffer
		if err := json.Compact(&b, a.Arguments); err != nil {
			return ptrace.Traces{}, fmt.Errorf("action: arguments: %w", err)
		}
		args = b.String()
	}
	td, _ := toolSpan(a.Tool, args)
	return td, nil
}

// toolSpan is a call of tool with args (JSON), in the GenAI semantic
// conventions, Google ADK's, OpenInference's and OpenLLMetry's at once.
func toolSpan(tool, args string) (ptrace.Traces, ptrace.Span) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(pcommon.TraceID{0xa6})
	span.SetSpanID(pcommon.SpanID{0xa6})
	span.SetName("execute_tool " + tool)
	span.SetKind(ptrace.SpanKindInternal)
	now := pcommon.NewTimestampFromTime(time.Now())
	span.SetStartTimestamp(now)
	span.SetEndTimestamp(now)
	attrs := span.Attributes()
	attrs.PutStr("gen_ai.operation.name", "execute_tool")
	attrs.PutStr("gen_ai.tool.name", tool)
	attrs.PutStr("gen_ai.tool.call.arguments", args)
	attrs.PutStr("gcp.vertex.agent.tool_call_args", args)
	attrs.PutStr("openinference.span.kind", "TOOL")
	attrs.PutStr("tool.name", tool)
	attrs.PutStr("input.value", args)
	attrs.PutStr("traceloop.span.kind", "tool")
	attrs.PutStr("traceloop.entity.name", tool)
	attrs.PutStr("traceloop.entity.input", args)
	return td, span
}

// spanAction reads one OTLP/JSON span.
func spanAction(raw json.RawMessage) (ptrace.Traces, error) {
	wrapped := append(append([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[`), raw...), []byte(`]}]}]}`)...)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(wrapped)
	if err != nil {
		return ptrace.Traces{}, fmt.Errorf("action: span: not an OTLP/JSON span: %w", err)
	}
	if td.SpanCount() != 1 {
		return ptrace.Traces{}, errors.New("action: span: one span expected")
	}
	return td, nil
}
