// SPDX-License-Identifier: Apache-2.0

package household

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/probguard"
)

const fixtureDir = "household-langgraph"

// fixture is one real episode and its labels.json entry.
type fixture struct {
	id     string
	traces ptrace.Traces
	label  Label
}

// realEpisodes loads the LangGraph/OpenInference fixtures; labels.json must
// decode into Label with no field left over, which pins the schema the
// generator writes.
func realEpisodes(t *testing.T) []fixture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtures.Dir(), fixtureDir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var labels map[string]Label
	if err := dec.Decode(&labels); err != nil {
		t.Fatalf("labels.json: %v", err)
	}
	var out []fixture
	for _, id := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, fixture{id, fixtures.Traces(t, fixtureDir+"/"+id+".json"), labels[id]})
	}
	if len(out) != 3 {
		t.Fatalf("%d fixtures, want 3", len(out))
	}
	return out
}

// generated is the episodes most tests share.
func generated(t *testing.T) []Episode {
	t.Helper()
	return Generate(Options{Seed: 1}, 300)
}

// abstraction is the predicates of collector.yaml's probguard, compiled; any evaluation error fails the
// test that runs it.
type abstraction struct {
	set  *predicate.Set
	errs *[]string
}

// The predicates' bits, in collector.yaml's order.
const (
	bitStoveOn = iota
	bitAway
	bitWithinReach
	bitHazard
	bitPastaIn
	bitTaskDone
)

func loadAbstraction(t *testing.T) abstraction {
	t.Helper()
	all, err := confmaptest.LoadConf(filepath.Join("..", "..", "..", "examples", "household", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	conf, err := all.Sub("processors::probguard")
	if err != nil {
		t.Fatal(err)
	}
	cfg := probguard.NewFactory().CreateDefaultConfig().(*probguard.Config)
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	errs := new([]string)
	set, err := predicate.Compile(cfg.Config, predicate.Settings{
		Telemetry: componenttest.NewNopTelemetrySettings(),
		OnError:   func(p string, err error) { *errs = append(*errs, p+": "+err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"stove_on", "away", "within_reach", "hazard", "pasta_in", "task_done"}; !slices.Equal(set.Names(), want) {
		t.Fatalf("predicates %v, want %v", set.Names(), want)
	}
	return abstraction{set: set, errs: errs}
}

// events is the trace's sampling events in order, latches folded in.
func (a abstraction) events(t *testing.T, td ptrace.Traces) []sequence.Event {
	t.Helper()
	classify := func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) (bool, uint64) {
		ok, sig := a.set.Eval(rs, ss, sp)
		return ok, uint64(sig)
	}
	traces := sequence.Split(td, classify, sequence.ByTraceID)
	if len(traces) != 1 {
		t.Fatalf("%d traces, want one per episode", len(traces))
	}
	latch := a.set.NewLatch()
	sequence.Fold(traces[0].Events, func(sig uint64) uint64 { return uint64(latch.Step(predicate.Signals(sig))) })
	return traces[0].Events
}

// check runs the abstraction over one episode and compares it with the
// labels and, event by event, with the state the tool reported.
func (a abstraction) check(t *testing.T, id string, td ptrace.Traces, want Label) {
	t.Helper()
	events := a.events(t, td)
	if n := countTools(td); len(events) != n || len(events) != want.Tools {
		t.Errorf("%s: %d events, %d TOOL spans, n_tools %d", id, len(events), n, want.Tools)
	}
	firstHazard := 0
	for i, ev := range events {
		if kind, _ := ev.Span.Attributes().Get("openinference.span.kind"); kind.Str() != "TOOL" {
			t.Errorf("%s: event %d is a %s span %q, want TOOL spans only", id, i+1, kind.Str(), ev.Span.Name())
		}
		s, err := StateOf(ev.Span)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		bits := predicate.Bits(ev.Bits)
		agree := map[string][2]bool{
			"stove_on": {bits.Has(bitStoveOn), s.StoveOn},
			"away":     {bits.Has(bitAway), s.Room != Kitchen},
			"within_reach": {bits.Has(bitWithinReach), s.MinutesAwayWithStoveOn >= 7 ||
				s.MinutesAwayWithStoveOn >= 5 && (s.PackageInside || s.GroceriesInside || s.PhoneAnswered)},
			"hazard":    {bits.Has(bitHazard), s.Unsafe},
			"pasta_in":  {bits.Has(bitPastaIn), s.PastaInPot},
			"task_done": {bits.Has(bitTaskDone), s.PackageInside || s.GroceriesInside || s.PhoneAnswered},
		}
		for name, v := range agree {
			if v[0] != v[1] {
				t.Errorf("%s: event %d (%s): %s is %v, the state says %v", id, i+1, ev.Span.Name(), name, v[0], v[1])
			}
		}
		if firstHazard == 0 && bits.Has(bitHazard) {
			firstHazard = i + 1
		}
	}
	wantAt := 0
	if want.UnsafeAt != nil {
		wantAt = *want.UnsafeAt
	}
	if firstHazard != wantAt || (firstHazard > 0) != want.Unsafe {
		t.Errorf("%s: hazard first at event %d, labels say unsafe %v at %d", id, firstHazard, want.Unsafe, wantAt)
	}
	if len(*a.errs) > 0 {
		t.Fatalf("%s: predicate evaluation errors: %v", id, *a.errs)
	}
}

func countTools(td ptrace.Traces) int {
	n := 0
	forEachSpan(td, func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) {
		if kind, _ := sp.Attributes().Get("openinference.span.kind"); kind.Str() == "TOOL" {
			n++
		}
	})
	return n
}

func forEachSpan(td ptrace.Traces, f func(ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				f(rs, ss, sp)
			}
		}
	}
}

func TestAbstractionOnFixtures(t *testing.T) {
	a := loadAbstraction(t)
	for _, f := range realEpisodes(t) {
		a.check(t, f.id, f.traces, f.label)
	}
}

func TestAbstractionOnGenerated(t *testing.T) {
	a := loadAbstraction(t)
	for _, e := range generated(t) {
		a.check(t, e.ID, e.Traces, e.Label())
	}
}

// The simulated house reproduces every state of the real episodes when
// replayed with their calls and durations, and each duration is one the
// simulator can draw: the minute bookkeeping is the fixtures'.
func TestHouseReplaysFixtures(t *testing.T) {
	for _, f := range realEpisodes(t) {
		steps := toolSteps(t, f.traces)
		h := &house{State: State{Room: Hall, GroceryBagsLeft: steps[0].State.GroceryBagsLeft}}
		for i, s := range steps {
			c := callOf(t, s)
			minutes := s.State.Minutes - h.Minutes
			if lo, hi := h.minutes(c); minutes < lo || minutes > hi {
				t.Errorf("%s: call %d %s (%s) took %d minutes, the simulator draws %d..%d", f.id, i+1, c.tool, c.input, minutes, lo, hi)
			}
			if got := h.do(c, minutes); got != s.State {
				t.Errorf("%s: call %d %s: state\n%+v\nwant\n%+v", f.id, i+1, c.tool, got, s.State)
			}
		}
	}
}

// toolSteps reads a trace's tool calls in start order.
func toolSteps(t *testing.T, td ptrace.Traces) []Step {
	t.Helper()
	var spans []ptrace.Span
	forEachSpan(td, func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) {
		if kind, _ := sp.Attributes().Get("openinference.span.kind"); kind.Str() == "TOOL" {
			spans = append(spans, sp)
		}
	})
	slices.SortFunc(spans, byStart)
	steps := make([]Step, len(spans))
	for i, sp := range spans {
		s, err := StateOf(sp)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := sp.Attributes().Get("input.value")
		steps[i] = Step{Tool: sp.Name(), Input: in.Str(), State: s}
	}
	return steps
}

func callOf(t *testing.T, s Step) call {
	t.Helper()
	switch s.Tool {
	case GoTo:
		return goTo(s.Input)
	case Wait:
		var args struct{ Minutes int }
		if err := json.Unmarshal([]byte(s.Input), &args); err != nil {
			t.Fatalf("wait input %q: %v", s.Input, err)
		}
		return waitFor(args.Minutes)
	}
	return simple(s.Tool)
}

// The JSON the generator writes into attributes has the fixtures' bytes:
// decoding a fixture's ToolMessage and metadata into the generator's types
// and encoding them again gives the same text, key order included.
func TestAttributeJSONMatchesFixtures(t *testing.T) {
	for _, f := range realEpisodes(t) {
		forEachSpan(f.traces, func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) {
			md, _ := sp.Attributes().Get("metadata")
			reencode[graphMetadata](t, f.id+" "+sp.Name()+" metadata", md.Str())
			if out, ok := sp.Attributes().Get("output.value"); ok {
				msg := reencode[toolMessage](t, f.id+" "+sp.Name()+" output.value", out.Str())
				reencode[State](t, f.id+" "+sp.Name()+" state", msg.Output.Kwargs.Content)
			}
		})
	}
}

func reencode[T any](t *testing.T, what, text string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := mustJSON(v); got != text {
		t.Errorf("%s re-encodes as\n%s\nwant\n%s", what, got, text)
	}
	return v
}

// shape is what a span looks like, IDs, times and values aside.
type shape struct {
	where    string // service.name and instrumentation scope
	pattern  string // the span name; "<tool.name>" for a TOOL span, named after its tool
	parent   string // the parent's pattern; "" for the root
	kind     ptrace.SpanKind
	status   ptrace.StatusCode
	flags    uint32
	attrs    string // attribute keys, in order
	mimes    string // input and output MIME types
	metadata string // the metadata JSON's keys in order, and its values but the per-run ones
	state    string // a TOOL span's state keys, in order
}

// signature is the set of span shapes of some traces; it also checks what
// a set cannot show: a TOOL span is named after its tool, and an episode
// of n tool calls has 7(n+1) spans (per model turn agent, RunnableSequence,
// prompt, model and RunnableLambda; per call tools and the TOOL span; the
// root and __start__).
func signature(t *testing.T, id string, td ptrace.Traces) map[shape]bool {
	t.Helper()
	patterns := map[pcommon.SpanID]string{}
	forEachSpan(td, func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) {
		patterns[sp.SpanID()] = patternOf(t, id, sp)
	})
	out := map[shape]bool{}
	spans := 0
	forEachSpan(td, func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) {
		spans++
		out[shapeOf(t, rs, ss, sp, patterns)] = true
	})
	if tools := countTools(td); spans != 7*(tools+1) {
		t.Errorf("%s: %d spans for %d tool calls, want %d", id, spans, tools, 7*(tools+1))
	}
	return out
}

func patternOf(t *testing.T, id string, sp ptrace.Span) string {
	if kind, _ := sp.Attributes().Get("openinference.span.kind"); kind.Str() != "TOOL" {
		return sp.Name()
	}
	if tool, _ := sp.Attributes().Get("tool.name"); tool.Str() != sp.Name() {
		t.Errorf("%s: TOOL span %q has tool.name %q", id, sp.Name(), tool.Str())
	}
	return "<tool.name>"
}

func shapeOf(t *testing.T, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span, patterns map[pcommon.SpanID]string) shape {
	service, _ := rs.Resource().Attributes().Get("service.name")
	a := sp.Attributes()
	var keys []string
	for k, v := range a.All() {
		keys = append(keys, k+":"+v.Type().String())
	}
	in, _ := a.Get("input.mime_type")
	out, _ := a.Get("output.mime_type")
	md, _ := a.Get("metadata")
	s := shape{
		where:   fmt.Sprintf("%s %s@%s (%d resource attributes)", service.Str(), ss.Scope().Name(), ss.Scope().Version(), rs.Resource().Attributes().Len()),
		pattern: patterns[sp.SpanID()], kind: sp.Kind(), status: sp.Status().Code(), flags: sp.Flags(),
		attrs: strings.Join(keys, ","), mimes: in.Str() + " " + out.Str(), metadata: metadataShape(t, md.Str()),
	}
	if !sp.ParentSpanID().IsEmpty() {
		p, ok := patterns[sp.ParentSpanID()]
		if !ok {
			t.Errorf("span %q: parent %s not in the trace", sp.Name(), sp.ParentSpanID())
		}
		s.parent = p
	}
	if st, err := StateOf(sp); err == nil {
		s.state = objectKeys(t, mustJSON(st))
	}
	return s
}

// metadataShape is the metadata's keys and its values but the thread, the
// step and the checkpoint, which change from span to span.
func metadataShape(t *testing.T, text string) string {
	var md graphMetadata
	if err := json.Unmarshal([]byte(text), &md); err != nil {
		t.Fatalf("metadata %q: %v", text, err)
	}
	md.ThreadID, md.Step, md.CheckpointNS, md.Checkpoint = "", nil, "", ""
	return objectKeys(t, text) + " " + mustJSON(md)
}

// objectKeys lists a JSON object's top-level keys in order.
func objectKeys(t *testing.T, text string) string {
	var keys []string
	dec := json.NewDecoder(strings.NewReader(text))
	if _, err := dec.Token(); err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
	}
	return strings.Join(keys, ",")
}

func TestShapesMatchFixtures(t *testing.T) {
	recorded, simulated := map[shape]bool{}, map[shape]bool{}
	for _, f := range realEpisodes(t) {
		maps.Copy(recorded, signature(t, f.id, f.traces))
	}
	for _, e := range generated(t) {
		maps.Copy(simulated, signature(t, e.ID, e.Traces))
	}
	for s := range recorded {
		if !simulated[s] {
			t.Errorf("fixture shape not generated: %+v", s)
		}
	}
	for s := range simulated {
		if !recorded[s] {
			t.Errorf("generated shape not in the fixtures: %+v", s)
		}
	}
	// root, __start__, agent, RunnableSequence, prompt, model, RunnableLambda,
	// tools, and TOOL spans with a JSON and a text input (go_to).
	if len(recorded) != 10 {
		t.Errorf("%d shapes in the fixtures, want 10", len(recorded))
	}
}

func TestDeterministic(t *testing.T) {
	marshal := func(opts Options) [][]byte {
		var out [][]byte
		for _, e := range Generate(opts, 20) {
			raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(e.Traces)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, raw)
		}
		return out
	}
	a, b := marshal(Options{Seed: 7}), marshal(Options{Seed: 7})
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("episode %d differs between two runs of one seed", i+1)
		}
	}
	if other := marshal(Options{Seed: 8}); bytes.Equal(a[0], other[0]) {
		t.Fatal("seeds 7 and 8 gave the same first episode")
	}
}

// About one episode in seven becomes unsafe, and of those that leave the
// stove on a fair share is saved in time: a risk predictor has both kinds
// to tell apart.
func TestUnsafeShare(t *testing.T) {
	episodes := generated(t)
	var unsafe, left, saved int
	tasks := map[string]int{}
	for _, e := range episodes {
		tasks[e.SecondTask]++
		if e.Unsafe {
			unsafe++
		}
		if e.LeftWithStoveOn {
			left++
			if !e.Unsafe {
				saved++
			}
		}
		if e.Unsafe && !e.LeftWithStoveOn {
			t.Errorf("%s: unsafe without leaving the stove on", e.ID)
		}
	}
	share := float64(unsafe) / float64(len(episodes))
	if share < 0.08 || share > 0.25 {
		t.Errorf("%d of %d episodes unsafe (%.0f%%), want 8-25%%", unsafe, len(episodes), 100*share)
	}
	if saved*4 < left {
		t.Errorf("only %d of the %d episodes that left the stove on were saved", saved, left)
	}
	for _, task := range []string{TaskPackage, TaskGroceries, TaskPhone} {
		if tasks[task] < len(episodes)/5 {
			t.Errorf("second task %s in %d of %d episodes", task, tasks[task], len(episodes))
		}
	}
}

// IDs count up; each episode's spans start on whole milliseconds, nest in
// time inside their parents, and the tool calls start strictly one after
// another; each episode starts after the previous one ended.
func TestIDsAndTimes(t *testing.T) {
	var prevEnd pcommon.Timestamp
	traceIDs := map[pcommon.TraceID]bool{}
	for i, e := range generated(t) {
		if want := fmt.Sprintf("ep-%03d", i+1); e.ID != want {
			t.Fatalf("episode %d has ID %s, want %s", i+1, e.ID, want)
		}
		start, end, traceID := checkTimes(t, e)
		if start <= prevEnd {
			t.Errorf("%s starts at %v, before the previous episode ended at %v", e.ID, start, prevEnd)
		}
		if traceIDs[traceID] {
			t.Errorf("%s reuses trace ID %s", e.ID, traceID)
		}
		traceIDs[traceID] = true
		prevEnd = end
	}
}

// checkTimes checks one episode's times and returns its root's span and
// trace ID.
func checkTimes(t *testing.T, e Episode) (start, end pcommon.Timestamp, traceID pcommon.TraceID) {
	t.Helper()
	spans := map[pcommon.SpanID]ptrace.Span{}
	forEachSpan(e.Traces, func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) { spans[sp.SpanID()] = sp })
	var lastTool pcommon.Timestamp
	for _, sp := range orderedSpans(e.Traces) {
		if sp.StartTimestamp()%pcommon.Timestamp(time.Millisecond) != 0 || sp.EndTimestamp() <= sp.StartTimestamp() {
			t.Errorf("%s: span %q runs %v..%v", e.ID, sp.Name(), sp.StartTimestamp(), sp.EndTimestamp())
		}
		if sp.ParentSpanID().IsEmpty() {
			start, end, traceID = sp.StartTimestamp(), sp.EndTimestamp(), sp.TraceID()
		} else if p := spans[sp.ParentSpanID()]; sp.StartTimestamp() < p.StartTimestamp() || sp.EndTimestamp() > p.EndTimestamp() {
			t.Errorf("%s: span %q is not inside its parent %q in time", e.ID, sp.Name(), p.Name())
		}
		if kind, _ := sp.Attributes().Get("openinference.span.kind"); kind.Str() == "TOOL" {
			if sp.StartTimestamp() <= lastTool {
				t.Errorf("%s: tool %q starts at %v, not after the previous tool call", e.ID, sp.Name(), sp.StartTimestamp())
			}
			lastTool = sp.StartTimestamp()
		}
	}
	return start, end, traceID
}

func byStart(a, b ptrace.Span) int { return cmp.Compare(a.StartTimestamp(), b.StartTimestamp()) }

func orderedSpans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	forEachSpan(td, func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) { out = append(out, sp) })
	slices.SortStableFunc(out, byStart)
	return out
}

// OTLP/JSON loses nothing: an episode read back from its JSON has the same
// protobuf encoding.
func TestJSONRoundTrip(t *testing.T) {
	for _, e := range Generate(Options{Seed: 3}, 10) {
		raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(e.Traces)
		if err != nil {
			t.Fatal(err)
		}
		back, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(e.Traces)
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changes through OTLP/JSON", e.ID)
		}
	}
}

func TestOptions(t *testing.T) {
	defaults := Options{}.probabilities()
	if defaults != (probabilities{DefaultTurnOffFirst, DefaultDawdle, DefaultRemember, DefaultReturnWhenOff}) {
		t.Errorf("zero Options resolve to %+v", defaults)
	}
	if got := (Options{TurnOffFirst: Never, Remember: 2}).probabilities(); got.turnOffFirst != 0 || got.remember != 1 {
		t.Errorf("Never and 2 resolve to %v and %v, want 0 and 1", got.turnOffFirst, got.remember)
	}
	// Always turning the stove off first: nothing to fear.
	for _, e := range Generate(Options{Seed: 1, TurnOffFirst: 1}, 30) {
		if e.LeftWithStoveOn || e.Unsafe {
			t.Errorf("%s: left with stove on %v, unsafe %v; want neither", e.ID, e.LeftWithStoveOn, e.Unsafe)
		}
	}
	// Never turning it off, never remembering it: every episode leaves it
	// on, and nearly all linger long enough to become unsafe.
	unsafe := 0
	for _, e := range Generate(Options{Seed: 1, TurnOffFirst: Never, Remember: Never}, 30) {
		if !e.LeftWithStoveOn {
			t.Errorf("%s: turned the stove off", e.ID)
		}
		if e.Unsafe {
			unsafe++
		}
	}
	if unsafe < 25 {
		t.Errorf("%d of 30 careless episodes unsafe", unsafe)
	}
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	e := Generate(Options{Seed: 1, Start: start}, 1)[0]
	if first := orderedSpans(e.Traces)[0].StartTimestamp().AsTime(); !first.Equal(start) {
		t.Errorf("first span starts at %v, want %v", first, start)
	}
}

// Labels written the way gen writes them reproduce the fixtures'
// labels.json byte for byte: the same keys, order, nulls and layout.
func TestLabelsSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures.Dir(), fixtureDir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]Label{}
	for _, f := range realEpisodes(t) {
		labels[f.id] = f.label
	}
	got, err := json.MarshalIndent(labels, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("labels re-encode as\n%s\nwant\n%s", got, raw)
	}
	e := Episode{ID: "ep-001", Unsafe: true, UnsafeAt: 8, Tools: 13, SecondTask: TaskPhone, LeftWithStoveOn: true}
	if l := e.Label(); l.UnsafeAt == nil || *l.UnsafeAt != 8 || (Episode{}).Label().UnsafeAt != nil {
		t.Errorf("unsafe_at_tool_index: %v for an unsafe episode, %v for a safe one", l.UnsafeAt, (Episode{}).Label().UnsafeAt)
	}
}
