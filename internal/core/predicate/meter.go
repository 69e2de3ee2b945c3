// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A meter is a predicate over what a group has done so far rather than over
// one span: a budget (a running total crossed its bound), a repeat (the same
// call again), no progress (the same result again). Its span-local part is a
// measurement the Set reads at each span (meterRead); the Latch folds the
// measurements of a group in sequence order and the meter holds at the span
// where its condition first becomes true. A budget reads every span, not
// only events (token usage is on model calls, which are not events): a span
// that is no event but carries a measurement is kept as a silent event until
// the fold, and stays an event only where a meter holds there
// (events.Source drops the others), so that the violation lands on the span
// that crossed the bound.

// Budget bounds an aggregate over a group: exactly one of Sum, Count and
// MaxOf names the quantity; the predicate holds at the span where the
// aggregate first exceeds Max (per name of Per, when given).
type Budget struct {
	Sum   string
	Count string
	MaxOf string
	Max   float64
	Per   string
}

// Repeats holds at a tool call whose key (the tool, and its arguments or its
// result) occurred N times among the group's last Within tool calls, this
// one included: at the call that makes it N, again only after it fell below.
type Repeats struct {
	Key    []string
	N      int
	Within int
}

// NoProgress holds at the K-th call in a row of one tool (calls of other
// tools between do not count) whose result is the same as the previous
// calls', whatever their arguments.
type NoProgress struct {
	K int
}

// The quantities a budget names besides a span attribute. Token usage is
// read where each convention keeps it; the first convention a span has wins,
// so that a span carrying two conventions is not counted twice.
const (
	QuantityTokens       = "tokens"        // input plus output tokens
	QuantityInputTokens  = "input_tokens"  // prompt tokens
	QuantityOutputTokens = "output_tokens" // completion tokens
	QuantityDuration     = "duration"      // an event's duration in seconds
	QuantityToolCalls    = "tool_calls"    // a tool call counts one (count only)
)

// tokenKeys are the input and output token attributes of GenAI semantic
// conventions, OpenInference and older OpenLLMetry, in that order.
var tokenKeys = [][2]string{
	{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"},
	{"llm.token_count.prompt", "llm.token_count.completion"},
	{"gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens"},
}

// The per values of a budget.
const (
	PerTool  = "tool"
	PerAgent = "agent"
)

// meterKind says which meter a meterOp is.
type meterKind uint8

const (
	budgetMeter meterKind = iota
	repeatsMeter
	noProgressMeter
	trajectoryMeter
	flowMeter
)

// aggregation is what a budget does with its values.
type aggregation uint8

const (
	aggSum aggregation = iota
	aggCount
	aggMax
)

// meterOp is one meter predicate of a Set, on bit out.
type meterOp struct {
	kind     meterKind
	name     string // the predicate's, for what the crossing span is told
	out      uint
	agg      aggregation
	quantity string
	max      float64
	per      string
	result   bool // repeats: the key is the tool and its result, not its arguments
	toolOnly bool // repeats: the key is the tool alone
	n        int  // repeats: N; no_progress: K
	within   int
	traj     *trajectoryPlan
	flow     *flowPlan
}

// decodeBudget reads budget: {sum|count|max_of: QUANTITY, max: N, per: tool|agent}.
func decodeBudget(raw any) (*Budget, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("budget: want a map {sum|count|max_of: QUANTITY, max: NUMBER, per: tool|agent}, got %T", raw)
	}
	var b Budget
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var err error
		switch k {
		case "sum":
			b.Sum, err = stringValue("budget: sum", m[k])
		case "count":
			b.Count, err = stringValue("budget: count", m[k])
		case "max_of":
			b.MaxOf, err = stringValue("budget: max_of", m[k])
		case "max":
			var ok bool
			if b.Max, ok = toFloat(m[k]); !ok || b.Max < 0 {
				err = fmt.Errorf("budget: max: want a number of at least 0, got %v (%T)", m[k], m[k])
			}
		case "per":
			b.Per, err = stringValue("budget: per", m[k])
		default:
			err = fmt.Errorf("budget: unknown key %q: valid keys are sum, count, max_of, max and per", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if _, given := m["max"]; !given {
		return nil, errors.New("budget: max is required: the bound the aggregate may not exceed")
	}
	return &b, nil
}

// decodeRepeats reads repeats: {key: [tool, args|result], n: N, within: W}.
func decodeRepeats(raw any) (*Repeats, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("repeats: want a map {key: [tool, args], n: N, within: W}, got %T", raw)
	}
	r := Repeats{Key: []string{"tool", "args"}}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var err error
		switch k {
		case "key":
			r.Key, err = stringList("repeats: key", m[k])
		case "n":
			r.N, err = positiveInt("repeats: n", m[k])
		case "within":
			r.Within, err = positiveInt("repeats: within", m[k])
		default:
			err = fmt.Errorf("repeats: unknown key %q: valid keys are key, n and within", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// decodeNoProgress reads no_progress: {k: K}.
func decodeNoProgress(raw any) (*NoProgress, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no_progress: want a map {k: K}, got %T", raw)
	}
	var np NoProgress
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "k" {
			return nil, fmt.Errorf("no_progress: unknown key %q: the valid key is k", k)
		}
		var err error
		if np.K, err = positiveInt("no_progress: k", m[k]); err != nil {
			return nil, err
		}
	}
	return &np, nil
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	return 0, false
}

// maxMeterCount bounds n, within and k: a group's repeat window is kept.
const maxMeterCount = 1000

func positiveInt(key string, v any) (int, error) {
	f, ok := toFloat(v)
	if !ok || f != math.Trunc(f) || f < 1 || f > maxMeterCount {
		return 0, fmt.Errorf("%s: want a whole number from 1 to %d, got %v (%T)", key, maxMeterCount, v, v)
	}
	return int(f), nil
}

func stringList(key string, v any) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a list such as [tool, args], got %T", key, v)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want names, got %T in the list", key, it)
		}
		out = append(out, s)
	}
	return out, nil
}

// validate checks a budget's quantity, bound and per.
func (b *Budget) validate() error {
	var given []string
	for _, q := range []struct{ key, v string }{{"sum", b.Sum}, {"count", b.Count}, {"max_of", b.MaxOf}} {
		if q.v != "" {
			given = append(given, q.key)
		}
	}
	if len(given) != 1 {
		return fmt.Errorf("budget: give exactly one of sum, count and max_of (the quantity: %s, %s, %s, %s, or a span attribute), got %s",
			QuantityTokens, QuantityInputTokens, QuantityOutputTokens, QuantityDuration, orNone(given))
	}
	if b.Count == "" && b.quantity() == QuantityToolCalls {
		return fmt.Errorf("budget: %s is counted (count: %s), not summed", QuantityToolCalls, QuantityToolCalls)
	}
	if b.Per != "" && b.Per != PerTool && b.Per != PerAgent {
		return fmt.Errorf("budget: per %q: valid values are %q and %q (leave it out for one total per group)", b.Per, PerTool, PerAgent)
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " and ")
}

func (b *Budget) quantity() string { return b.Sum + b.Count + b.MaxOf }

func (b *Budget) aggregation() aggregation {
	switch {
	case b.Count != "":
		return aggCount
	case b.MaxOf != "":
		return aggMax
	}
	return aggSum
}

func (r *Repeats) validate() error {
	switch {
	case slices.Equal(r.Key, []string{"tool"}), slices.Equal(r.Key, []string{"tool", "args"}), slices.Equal(r.Key, []string{"tool", "result"}):
	default:
		return fmt.Errorf("repeats: key %v: valid keys are [tool, args], [tool, result] and [tool]", r.Key)
	}
	if r.N < 2 {
		return fmt.Errorf("repeats: n is required, at least 2 (the call that makes n occurrences holds), got %d", r.N)
	}
	if r.Within != 0 && r.Within < r.N {
		return fmt.Errorf("repeats: within %d is less than n %d: n occurrences cannot fit", r.Within, r.N)
	}
	return nil
}

func (np *NoProgress) validate() error {
	if np.K < 2 {
		return fmt.Errorf("no_progress: k is required, at least 2 (the k-th equal result in a row holds), got %d", np.K)
	}
	return nil
}

// meterOpOf is a meter predicate compiled onto bit out; nil for any other.
// A trajectory's reference is read with s's events condition.
func (s *Set) meterOpOf(name string, p *Predicate, out uint) (*meterOp, error) {
	if p.Trajectory != nil {
		plan, err := s.loadTrajectory(p.Trajectory)
		if err != nil {
			return nil, err
		}
		return &meterOp{kind: trajectoryMeter, name: name, out: out, traj: plan}, nil
	}
	if p.Flows != nil {
		return &meterOp{kind: flowMeter, name: name, out: out, flow: newFlowPlan(p.Flows)}, nil
	}
	return meterOpOfCounts(name, p, out), nil
}

func meterOpOfCounts(name string, p *Predicate, out uint) *meterOp {
	switch {
	case p.Budget != nil:
		return &meterOp{kind: budgetMeter, name: name, out: out, agg: p.Budget.aggregation(), quantity: p.Budget.quantity(),
			max: p.Budget.Max, per: p.Budget.Per}
	case p.Repeats != nil:
		within := p.Repeats.Within
		if within == 0 {
			within = p.Repeats.N
		}
		return &meterOp{kind: repeatsMeter, name: name, out: out, n: p.Repeats.N, within: within,
			result: slices.Contains(p.Repeats.Key, "result"), toolOnly: len(p.Repeats.Key) == 1}
	case p.NoProgress != nil:
		return &meterOp{kind: noProgressMeter, name: name, out: out, n: p.NoProgress.K}
	}
	return nil
}

func (p *Predicate) meter() bool {
	return p.Budget != nil || p.Repeats != nil || p.NoProgress != nil || p.Trajectory != nil || p.Flows != nil
}

// describeMeter is what a meter predicate means, for docs and debug logs.
func (p *Predicate) describeMeter() string {
	switch {
	case p.Budget != nil:
		b := p.Budget
		agg := map[aggregation]string{aggSum: "sum", aggCount: "count", aggMax: "max_of"}[b.aggregation()]
		s := fmt.Sprintf("budget(%s of %s > %s", agg, b.quantity(), strconv.FormatFloat(b.Max, 'g', -1, 64))
		if b.Per != "" {
			s += " per " + b.Per
		}
		return s + ")"
	case p.Trajectory != nil:
		return p.Trajectory.String()
	case p.Flows != nil:
		return p.Flows.String()
	case p.Repeats != nil:
		return fmt.Sprintf("repeats(key: [%s], n: %d, within: %d)", strings.Join(p.Repeats.Key, ", "), p.Repeats.N, max(p.Repeats.Within, p.Repeats.N))
	}
	return fmt.Sprintf("no_progress(k: %d)", p.NoProgress.K)
}

// Measurement is what the meters read at one span, in meter order; nil when
// no meter read anything there.
type Measurement struct {
	reads []meterRead
}

// meterRead is one meter's reading at a span.
type meterRead struct {
	ok    bool
	value float64 // a budget's
	name  string  // a budget's per name; a repeat's or no_progress's tool
	hash  uint64  // a repeat's key; no_progress's result; a trajectory's call key
	text  string  // a trajectory's call, as a reader reads it
	// a flow's: the values a From call produced, the strings a To call carries
	produced []flowValue
	carried  []string
}

// measure reads every meter at the span; isEvent says whether the span is
// an event (repeats and no_progress read tool calls, which are events).
func (ev *evaluation) measure(isEvent bool) *Measurement {
	var m *Measurement
	for i := range ev.set.plan.meters {
		r := ev.read(&ev.set.plan.meters[i], isEvent)
		if !r.ok {
			continue
		}
		if m == nil {
			m = &Measurement{reads: make([]meterRead, len(ev.set.plan.meters))}
		}
		m.reads[i] = r
	}
	return m
}

func (ev *evaluation) read(op *meterOp, isEvent bool) meterRead {
	if op.kind != budgetMeter {
		if !isEvent {
			return meterRead{}
		}
		return ev.readCallKey(op)
	}
	var r meterRead
	switch op.quantity {
	case QuantityTokens, QuantityInputTokens, QuantityOutputTokens:
		r.value, r.ok = tokens(ev.span.Attributes(), op.quantity)
	case QuantityDuration:
		if isEvent {
			r.value, r.ok = float64(ev.span.EndTimestamp()-ev.span.StartTimestamp())/1e9, true
		}
	case QuantityToolCalls:
		_, r.ok = ev.facts.toolOf()
		r.ok = r.ok && isEvent
	default:
		r.value, r.ok = numberAttribute(ev.span.Attributes(), op.quantity)
	}
	if !r.ok {
		return r
	}
	if op.agg == aggCount {
		r.value = 1
	}
	switch op.per {
	case PerTool:
		r.name, r.ok = ev.facts.toolOf()
	case PerAgent:
		r.name, r.ok = agentOf(ev.span.Attributes())
	}
	return r
}

// readCallKey is a tool call's key: its tool, and the hash of its arguments
// or result as captures compare them (canonical JSON).
func (ev *evaluation) readCallKey(op *meterOp) meterRead {
	tool, ok := ev.facts.toolOf()
	if !ok {
		return meterRead{}
	}
	if op.kind == flowMeter {
		return op.flow.read(ev, tool)
	}
	if op.kind == trajectoryMeter {
		args, found := ev.call(false)
		r := meterRead{ok: true, name: tool}
		r.hash, r.text = op.traj.callKey(tool, args, found)
		return r
	}
	r := meterRead{ok: true, name: tool, hash: fnv(tool)}
	if op.kind == repeatsMeter && op.toolOnly {
		return r
	}
	v, found := ev.call(op.kind == noProgressMeter || op.result)
	if !found {
		return meterRead{} // a call without a result is no progress either way
	}
	if op.kind == noProgressMeter {
		r.hash = hashValue(fnv(""), v)
	} else {
		r.hash = hashValue(r.hash, v)
	}
	return r
}

// hashValue folds v into h as canonical JSON compares values (what
// captures compare): a map by its entries whatever their order, a number
// by its value (an integral double as the integer), without building the
// text: a call's key costs no allocation.
func hashValue(h uint64, v pcommon.Value) uint64 {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return fnvMore(mix(h, 's'), v.Str())
	case pcommon.ValueTypeInt:
		return mix(mix(h, 'i'), uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		if f := v.Double(); f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return mix(mix(h, 'i'), uint64(int64(f)))
		}
		return mix(mix(h, 'f'), math.Float64bits(v.Double()))
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return mix(h, 't')
		}
		return mix(h, 'F')
	case pcommon.ValueTypeMap:
		var sum uint64 // entries added: the same for any order
		for k, x := range v.Map().All() {
			sum += hashValue(fnv(k), x)
		}
		return mix(mix(h, 'm'), sum)
	case pcommon.ValueTypeSlice:
		h = mix(h, 'a')
		for _, x := range v.Slice().All() {
			h = hashValue(mix(h, ','), x)
		}
		return mix(h, ']')
	}
	return mix(h, 'n') // null, or bytes (not JSON)
}

// mix folds eight bytes of x into an FNV-1a hash.
func mix(h, x uint64) uint64 {
	for range 8 {
		h ^= x & 0xff
		h *= 1099511628211
		x >>= 8
	}
	return h
}

// tokens reads a token count in the first convention the span carries.
func tokens(attrs pcommon.Map, quantity string) (float64, bool) {
	for _, keys := range tokenKeys {
		in, okIn := numberAttribute(attrs, keys[0])
		out, okOut := numberAttribute(attrs, keys[1])
		if !okIn && !okOut {
			continue
		}
		switch quantity {
		case QuantityInputTokens:
			return in, okIn
		case QuantityOutputTokens:
			return out, okOut
		}
		return in + out, true
	}
	return 0, false
}

// numberAttribute reads a numeric span attribute.
func numberAttribute(attrs pcommon.Map, key string) (float64, bool) {
	v, ok := attrs.Get(key)
	if !ok {
		return 0, false
	}
	return numberValue(v)
}

// numberValue reads a number, or a string holding one (some
// instrumentations write numbers as text); NaN is none.
func numberValue(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	case pcommon.ValueTypeDouble:
		return v.Double(), !math.IsNaN(v.Double())
	case pcommon.ValueTypeStr:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
		return f, err == nil && !math.IsNaN(f)
	}
	return 0, false
}

func agentOf(attrs pcommon.Map) (string, bool) {
	for _, k := range []string{"gen_ai.agent.name", "agent.name"} {
		if v, ok := attrs.Get(k); ok && v.Str() != "" {
			return v.Str(), true
		}
	}
	return "", false
}

// fnv is FNV-1a: stable across processes, so a checkpointed window still
// matches after a restart (maphash's seed is not).
func fnv(s string) uint64 { return fnvMore(14695981039346656037, s) }

func fnvMore(h uint64, s string) uint64 {
	h ^= 0xff // a separator, so that (ab, c) and (a, bc) differ
	h *= 1099511628211
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// MeterNoteAttribute is the span attribute where a meter that holds at a
// span says why, with its running figure: what explanations show.
const MeterNoteAttribute = "agentguard.meter"

// note tells the span why a meter holds there.
func note(span ptrace.Span, text string) {
	attrs := span.Attributes()
	if old, ok := attrs.Get(MeterNoteAttribute); ok && old.Str() != "" && !strings.Contains(old.Str(), text) {
		text = old.Str() + "; " + text
	}
	attrs.PutStr(MeterNoteAttribute, text)
}

// A budget over an attribute no span carries (a misspelt key, a convention
// the agent does not use) never adds anything, so it never holds: silently
// inert. QuantityWatch notes, over spans as they come, whether some span
// carried what each budget reads, and the numeric attribute keys spans did
// carry, for a "did you mean". The collector's typo watch and agentguard
// check share it.

// QuantityWatch is not safe for concurrent use.
type QuantityWatch struct {
	watched []watchedQuantity
	keys    map[string]struct{} // numeric attribute keys seen, bounded
}

type watchedQuantity struct {
	predicate, quantity string
	keys                []string
	seen                bool
}

// maxQuantityKeys bounds the keys noted for a did-you-mean.
const maxQuantityKeys = 500

// budgetKeys are the attributes a budget's quantity reads; none for the
// quantities every event has (duration, tool_calls).
func budgetKeys(quantity string) []string {
	switch quantity {
	case QuantityDuration, QuantityToolCalls:
		return nil
	case QuantityTokens, QuantityInputTokens, QuantityOutputTokens:
		var keys []string
		for _, pair := range tokenKeys {
			keys = append(keys, pair[0], pair[1])
		}
		return keys
	}
	return []string{quantity}
}

// NewQuantityWatch watches the budgets among the literals
// (Config.Literals); nil when there are none.
func NewQuantityWatch(literals map[string]Literal) *QuantityWatch {
	w := &QuantityWatch{keys: map[string]struct{}{}}
	for _, name := range slices.Sorted(maps.Keys(literals)) {
		if q := literals[name].Quantity; q != "" {
			if keys := budgetKeys(q); keys != nil {
				w.watched = append(w.watched, watchedQuantity{predicate: name, quantity: q, keys: keys})
			}
		}
	}
	if len(w.watched) == 0 {
		return nil
	}
	return w
}

// Note takes a span: whether it carries what each budget reads, and its
// numeric attribute keys.
func (w *QuantityWatch) Note(span ptrace.Span) {
	if w == nil {
		return
	}
	attrs := span.Attributes()
	for i := range w.watched {
		q := &w.watched[i]
		for _, k := range q.keys {
			if !q.seen {
				_, q.seen = numberAttribute(attrs, k)
			}
		}
	}
	for k, v := range attrs.All() {
		if len(w.keys) >= maxQuantityKeys {
			break
		}
		if t := v.Type(); t == pcommon.ValueTypeInt || t == pcommon.ValueTypeDouble {
			w.keys[k] = struct{}{}
		}
	}
}

// QuantitySuspect is a budget whose quantity no span carried.
type QuantitySuspect struct {
	Predicate, Quantity string
	// Seen are the numeric attribute keys the spans carried.
	Seen []string
}

// Suspects are the budgets whose quantity no span noted carried, by
// predicate name.
func (w *QuantityWatch) Suspects() []QuantitySuspect {
	if w == nil {
		return nil
	}
	seen := slices.Sorted(maps.Keys(w.keys))
	var out []QuantitySuspect
	for _, q := range w.watched {
		if !q.seen {
			out = append(out, QuantitySuspect{Predicate: q.predicate, Quantity: q.quantity, Seen: seen})
		}
	}
	return out
}
