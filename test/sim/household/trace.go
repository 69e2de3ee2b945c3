// SPDX-License-Identifier: Apache-2.0

package household

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures/recording"
)

// What the fixtures' exporter wrote: the service, the instrumentation scope,
// the agent graph and the model.
const (
	ServiceName  = "household-agent-langgraph-openinference"
	ScopeName    = "@arizeai/openinference-instrumentation-langchain"
	ScopeVersion = "4.1.1"
	AgentName    = "household_agent"
	ModelSpan    = "ScriptedChatModel"
	modelName    = "scripted-fake-model"
	coreVersion  = "1.4.0"
)

// sampledFlags are the W3C flags the JS SDK writes on every span: sampled,
// plus the bit saying whether the parent is remote is known (it is not).
const sampledFlags = 0x101

// The token counts of the scripted model: each turn's prompt is 50 tokens
// longer than the last; a tool call costs 12 completion tokens, the final
// answer 24.
const (
	firstPromptTokens = 90
	promptGrowth      = 50
	toolCallTokens    = 12
	answerTokens      = 24
)

// recorder lays one episode's spans out on a simulated clock, in the tree
// LangGraph JS and OpenInference give a createReactAgent run: the graph's
// root CHAIN; a __start__ node; per model turn an agent node (a
// RunnableSequence of prompt and model, then the routing RunnableLambda);
// per tool call a tools node holding the TOOL span. Start times are whole
// milliseconds, as the JS SDK records them; end times are not.
type recorder struct {
	rng          *rand.Rand
	modelLatency time.Duration // the mean model call; 0: the scripted model's milliseconds
	thread       string        // the episode ID: LangGraph's thread_id and session.id
	traceID      pcommon.TraceID
	clock        time.Time
	spans        ptrace.SpanSlice
}

// record writes the episode's trace into td, starting at start, and
// returns the time its root span ended.
func record(td ptrace.Traces, rng *rand.Rand, modelLatency time.Duration, thread string, steps []Step, start time.Time) time.Time {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", ServiceName)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	ss.Scope().SetVersion(ScopeVersion)
	r := &recorder{rng: rng, modelLatency: modelLatency, thread: thread, clock: start, spans: ss.Spans()}
	r.traceID = r.newTraceID()

	root := r.begin(AgentName, pcommon.NewSpanIDEmpty())
	r.chain(root, rootMetadata(thread), "application/json")
	r.advance(500*time.Microsecond, 3*time.Millisecond)
	r.startNode(root.SpanID())
	for i, s := range steps {
		r.agentNode(root.SpanID(), i, "tool_calls")
		r.toolsNode(root.SpanID(), 2*i+2, s)
	}
	r.agentNode(root.SpanID(), len(steps), "stop")
	r.advance(500*time.Microsecond, 5*time.Millisecond)
	r.end(root)
	// The exporter sends spans as they end.
	r.spans.Sort(func(a, b ptrace.Span) bool { return a.EndTimestamp() < b.EndTimestamp() })
	return r.clock
}

func (r *recorder) startNode(parent pcommon.SpanID) {
	sp := r.begin("__start__", parent)
	r.chain(sp, r.nodeMetadata(0, "__start__", "__start__"), "application/json")
	r.advance(400*time.Microsecond, 1500*time.Microsecond)
	r.end(sp)
}

// agentNode is model turn k (graph step 2k+1).
func (r *recorder) agentNode(parent pcommon.SpanID, k int, finish string) {
	md := r.nodeMetadata(2*k+1, "agent", "branch:to:agent")
	r.advance(500*time.Microsecond, 3*time.Millisecond)
	agent := r.begin("agent", parent)
	r.chain(agent, md, "application/json")
	r.advance(100*time.Microsecond, time.Millisecond)
	seq := r.begin("RunnableSequence", agent.SpanID())
	r.chain(seq, md, "application/json")
	r.advance(100*time.Microsecond, 800*time.Microsecond)
	prompt := r.begin("prompt", seq.SpanID())
	r.chain(prompt, md, "application/json")
	r.advance(400*time.Microsecond, 1300*time.Microsecond)
	r.end(prompt)
	r.advance(200*time.Microsecond, 1500*time.Microsecond)
	r.modelSpan(seq.SpanID(), k, finish, md)
	r.advance(100*time.Microsecond, 600*time.Microsecond)
	r.end(seq)
	r.advance(800*time.Microsecond, 2500*time.Microsecond)
	route := r.begin("RunnableLambda", agent.SpanID())
	r.chain(route, md, "text/plain")
	r.advance(300*time.Microsecond, 900*time.Microsecond)
	r.end(route)
	r.advance(50*time.Microsecond, 500*time.Microsecond)
	r.end(agent)
}

func (r *recorder) modelSpan(parent pcommon.SpanID, k int, finish string, md graphMetadata) {
	sp := r.begin(ModelSpan, parent)
	completion := toolCallTokens
	if finish == "stop" {
		completion = answerTokens
	}
	prompt := firstPromptTokens + promptGrowth*k
	md.LSIntegration = "langchain_chat_model"
	md.LSModelType, md.LSProvider, md.Versions = "chat", ModelSpan, &versions{Core: coreVersion}
	a := sp.Attributes()
	a.PutStr("openinference.span.kind", "LLM")
	a.PutStr("input.mime_type", "application/json")
	a.PutStr("output.mime_type", "application/json")
	a.PutStr("llm.invocation_parameters", `{"model":"`+modelName+`","temperature":0.7}`)
	a.PutStr("llm.model_name", modelName)
	a.PutInt("llm.token_count.completion", int64(completion))
	a.PutInt("llm.token_count.prompt", int64(prompt))
	a.PutInt("llm.token_count.total", int64(prompt+completion))
	a.PutStr("llm.finish_reason", finish)
	a.PutStr("metadata", md.json())
	a.PutStr("session.id", r.thread)
	if r.modelLatency > 0 {
		r.advance(r.modelLatency/2, r.modelLatency*3/2)
	} else {
		r.advance(300*time.Microsecond, 1200*time.Microsecond)
	}
	r.end(sp)
}

// toolsNode is graph step `step`: the tools node and its one tool call.
func (r *recorder) toolsNode(parent pcommon.SpanID, step int, s Step) {
	md := r.nodeMetadata(step, "tools", "branch:to:tools")
	r.advance(500*time.Microsecond, 3*time.Millisecond)
	tools := r.begin("tools", parent)
	r.chain(tools, md, "application/json")
	r.advance(100*time.Microsecond, time.Millisecond)
	r.toolSpan(tools.SpanID(), s, md)
	r.advance(time.Millisecond, 3*time.Millisecond)
	r.end(tools)
}

func (r *recorder) toolSpan(parent pcommon.SpanID, s Step, md graphMetadata) {
	sp := r.begin(s.Tool, parent)
	md.Versions = &versions{Core: coreVersion}
	a := sp.Attributes()
	a.PutStr("openinference.span.kind", "TOOL")
	a.PutStr("input.value", s.Input)
	a.PutStr("input.mime_type", inputMIME(s.Tool))
	a.PutStr("output.value", r.toolOutput(s))
	a.PutStr("output.mime_type", "application/json")
	a.PutStr("metadata", md.json())
	a.PutStr("session.id", r.thread)
	a.PutStr("tool.name", s.Tool)
	r.advance(300*time.Microsecond, time.Millisecond)
	r.end(sp)
}

// chain gives sp the attributes of an OpenInference CHAIN span.
func (r *recorder) chain(sp ptrace.Span, md graphMetadata, outputMIME string) {
	a := sp.Attributes()
	a.PutStr("openinference.span.kind", "CHAIN")
	a.PutStr("input.mime_type", "application/json")
	a.PutStr("output.mime_type", outputMIME)
	a.PutStr("metadata", md.json())
	a.PutStr("session.id", r.thread)
}

func (r *recorder) begin(name string, parent pcommon.SpanID) ptrace.Span {
	sp := r.spans.AppendEmpty()
	sp.SetTraceID(r.traceID)
	sp.SetSpanID(r.newSpanID())
	sp.SetParentSpanID(parent)
	sp.SetName(name)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetFlags(sampledFlags)
	sp.Status().SetCode(ptrace.StatusCodeOk)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(r.clock.Truncate(time.Millisecond)))
	return sp
}

func (r *recorder) end(sp ptrace.Span) {
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(r.clock))
}

// advance moves the clock on by a random time in [lo, hi).
func (r *recorder) advance(lo, hi time.Duration) {
	r.clock = r.clock.Add(lo + time.Duration(r.rng.Int64N(int64(hi-lo))))
}

func (r *recorder) newTraceID() pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], r.rng.Uint64())
	binary.BigEndian.PutUint64(id[8:], r.rng.Uint64()|1) // never the invalid all-zero ID
	return id
}

func (r *recorder) newSpanID() pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], r.rng.Uint64()|1)
	return id
}

// toolOutput is output.value: the LangChain ToolMessage, serialised the
// way OpenInference does, whose content is the state as JSON text.
func (r *recorder) toolOutput(s Step) string {
	return mustJSON(toolMessage{Output: lcMessage{
		LC: 1, Type: "constructor", ID: []string{"langchain_core", "messages", "ToolMessage"},
		Kwargs: toolKwargs{
			Status: "success", Content: mustJSON(s.State), ToolCallID: r.toolCallID(), Name: s.Tool,
			Metadata: messageMetadata{Versions: versions{Core: coreVersion}},
		},
	}})
}

// toolCallID is like the scripted model's: "call_" and a random 52-bit
// number in base 36.
func (r *recorder) toolCallID() string {
	return "call_" + strconv.FormatUint(r.rng.Uint64()>>12, 36)
}

// checkpoint is a node's checkpoint namespace: the node and a UUID (version
// 5, as LangGraph's task IDs are).
func (r *recorder) checkpoint(node string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], r.rng.Uint64())
	binary.BigEndian.PutUint64(b[8:], r.rng.Uint64())
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s:%x-%x-%x-%x-%x", node, b[:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// toolMessage is the JSON of a TOOL span's output.value, in its key order.
type toolMessage struct {
	Output lcMessage `json:"output"`
}

// lcMessage is a LangChain-serialised message.
type lcMessage struct {
	LC     int        `json:"lc"`
	Type   string     `json:"type"`
	ID     []string   `json:"id"`
	Kwargs toolKwargs `json:"kwargs"`
}

// toolKwargs are a ToolMessage's fields; Content holds the State as JSON.
type toolKwargs struct {
	Status           string          `json:"status"`
	Content          string          `json:"content"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
	Metadata         messageMetadata `json:"metadata"`
	AdditionalKwargs struct{}        `json:"additional_kwargs"`
	ResponseMetadata struct{}        `json:"response_metadata"`
}

// messageMetadata is the metadata LangChain puts on the message.
type messageMetadata struct {
	Versions versions `json:"versions"`
}

// StateOf reads the state a TOOL span reports: its output.value's
// ToolMessage content, two JSON levels down.
func StateOf(span ptrace.Span) (State, error) {
	out, ok := span.Attributes().Get("output.value")
	if !ok {
		return State{}, fmt.Errorf("span %q has no output.value", span.Name())
	}
	var msg toolMessage
	if err := json.Unmarshal([]byte(out.Str()), &msg); err != nil {
		return State{}, fmt.Errorf("span %q: output.value: %w", span.Name(), err)
	}
	var s State
	if err := json.Unmarshal([]byte(msg.Output.Kwargs.Content), &s); err != nil {
		return State{}, fmt.Errorf("span %q: ToolMessage content: %w", span.Name(), err)
	}
	return s, nil
}

type versions struct {
	Core string `json:"@langchain/core"`
}

// graphMetadata is the metadata attribute of every span: LangGraph's run
// configuration, in its key order. The root span has only the first two
// keys; the model and tool spans add theirs.
type graphMetadata struct {
	LSIntegration string    `json:"ls_integration"`
	ThreadID      string    `json:"thread_id"`
	Step          *int      `json:"langgraph_step,omitempty"`
	Node          string    `json:"langgraph_node,omitempty"`
	Triggers      []string  `json:"langgraph_triggers,omitempty"`
	Path          []string  `json:"langgraph_path,omitempty"`
	CheckpointNS  string    `json:"langgraph_checkpoint_ns,omitempty"`
	Checkpoint    string    `json:"checkpoint_ns,omitempty"`
	LSModelType   string    `json:"ls_model_type,omitempty"`
	LSProvider    string    `json:"ls_provider,omitempty"`
	Versions      *versions `json:"versions,omitempty"`
}

func rootMetadata(thread string) graphMetadata {
	return graphMetadata{LSIntegration: "langgraph", ThreadID: thread}
}

// nodeMetadata is the metadata of graph step `step`, which runs node after
// trigger; every span under the node shares it.
func (r *recorder) nodeMetadata(step int, node, trigger string) graphMetadata {
	ns := r.checkpoint(node)
	return graphMetadata{
		LSIntegration: "langgraph", ThreadID: r.thread, Step: &step, Node: node,
		Triggers: []string{trigger}, Path: []string{"__pregel_pull", node}, CheckpointNS: ns, Checkpoint: ns,
	}
}

func (md graphMetadata) json() string { return mustJSON(md) }

// mustJSON marshals values built here, which always marshal.
func mustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("household: %T does not marshal: %v", v, err))
	}
	return string(raw)
}

// AsNewEpisode makes a recorded episode episode i: a new trace ID (its first
// four bytes i) in a new LangGraph thread (session.id thread-i), so that a
// benchmark or a load can send one recording many times.
func AsNewEpisode(td ptrace.Traces, i int) {
	recording.Renumber(td, i, "thread-"+strconv.Itoa(i), "session.id")
}
