// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/ottlfuncs"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// householdEpisodes are the recorded household episodes (LangGraph JS,
// OpenInference): each tool span's state is two JSON levels down in its
// output.
var householdEpisodes = []string{"household-langgraph/ep-001.json", "household-langgraph/ep-004.json", "household-langgraph/ep-010.json"}

// householdConfig is the predicates and events condition of the household
// example's collector configuration, the very file it runs.
func householdConfig(t testing.TB) Config {
	t.Helper()
	all, err := confmaptest.LoadConf(filepath.Join("..", "..", "..", "examples", "household", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	conf, err := all.Sub("processors::probguard")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Config `mapstructure:",squash"`
		Rest   map[string]any `mapstructure:",remain"` // probguard's own fields
	}
	if err := conf.Unmarshal(&cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Predicates) != 6 {
		t.Fatalf("%d household predicates, want 6", len(cfg.Predicates))
	}
	return cfg.Config
}

// householdSpans are every span of the household episodes, each episode in
// start order.
func householdSpans(t testing.TB) []located {
	var out []located
	for _, f := range householdEpisodes {
		out = append(out, spansInOrder(fixtures.Traces(t, f))...)
	}
	return out
}

// BenchmarkHousehold: the household example's predicate set, one op one
// span: "spans" over every span of its recorded episodes (tool and other
// spans in their real proportion), "tool-spans" over its events alone, where
// its five JSON predicates call ParseJSON fourteen times.
func BenchmarkHousehold(b *testing.B) {
	s, err := Compile(householdConfig(b), Settings{Telemetry: componenttest.NewNopTelemetrySettings(),
		OnError: func(p string, err error) { b.Fatal(p, err) }})
	if err != nil {
		b.Fatal(err)
	}
	all := householdSpans(b)
	var tools []located
	for _, l := range all {
		if ok, _ := s.Eval(l.rs, l.ss, l.span); ok {
			tools = append(tools, l)
		}
	}
	for _, run := range []struct {
		name  string
		spans []located
	}{{"spans", all}, {"tool-spans", tools}} {
		b.Run(run.name, func(b *testing.B) {
			latch := s.NewLatch()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l := run.spans[i%len(run.spans)]
				if ok, sig := s.Eval(l.rs, l.ss, l.span); ok {
					latch.Step(sig)
				}
				i++
			}
		})
	}
}

type spanParser = ottl.Parser[*ottlspan.TransformContext]

// twoParsers are an OTTL parser with the standard converters and one with
// ParseJSON memoised, and the count of the memo's misses.
func twoParsers(t testing.TB) (std, memo *spanParser, m *jsonMemo, parses *int) {
	t.Helper()
	m, err := newJSONMemo()
	if err != nil {
		t.Fatal(err)
	}
	parses = new(int)
	parse := m.parse
	m.parse = func(ctx context.Context, tCtx *ottlspan.TransformContext, text string) (any, error) {
		*parses++
		return parse(ctx, tCtx, text)
	}
	ts := componenttest.NewNopTelemetrySettings()
	s, err := ottlspan.NewParser(ottlfuncs.StandardConverters[*ottlspan.TransformContext](), ts, ottlspan.EnablePathContextNames())
	if err != nil {
		t.Fatal(err)
	}
	p, err := ottlspan.NewParser(m.converters(), ts, ottlspan.EnablePathContextNames())
	if err != nil {
		t.Fatal(err)
	}
	return &s, &p, m, parses
}

// sameResult reports how two OTTL results differ: the same error text, or
// the same type and value.
func sameResult(got, want any, gotErr, wantErr error) string {
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		return fmt.Sprintf("error %v, want %v", gotErr, wantErr)
	}
	if reflect.TypeOf(got) != reflect.TypeOf(want) || !reflect.DeepEqual(raw(got), raw(want)) {
		return fmt.Sprintf("%T %v, want %T %v", got, raw(got), want, raw(want))
	}
	return ""
}

func raw(v any) any {
	switch v := v.(type) {
	case pcommon.Map:
		return v.AsRaw()
	case pcommon.Slice:
		return v.AsRaw()
	}
	return v
}

// leaves are the stateless conditions of a predicate: itself, or its latch's
// set and reset.
func leaves(p *Predicate) []string {
	if p.latched() {
		return append(leaves(p.Set), leaves(p.Reset)...)
	}
	return []string{p.OTTL()}
}

// Every household condition, at every span of the episodes (tool spans and
// the others, where output.value is missing or not JSON), twice over: the
// memoised ParseJSON gives each condition OTTL's own truth and error, and
// parses at most the two texts a span has, once each, where OTTL parses
// fourteen times.
func TestMemoisedParseJSONOnHousehold(t *testing.T) {
	std, memo, m, parses := twoParsers(t)
	cfg := householdConfig(t)
	conds := []string{cfg.Events.OTTL()}
	for _, p := range cfg.Predicates {
		conds = append(conds, leaves(&p.Predicate)...)
	}
	type pair struct {
		std, memo *ottl.Condition[*ottlspan.TransformContext]
	}
	var parsed []pair
	for _, c := range conds {
		s, err1 := std.ParseCondition(c)
		m, err2 := memo.ParseCondition(c)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", c, err1, err2)
		}
		parsed = append(parsed, pair{s, m})
	}
	ctx := context.Background()
	held, errs, jsonSpans := map[string]int{}, 0, 0
	for round := range 2 {
		for _, l := range householdSpans(t) {
			before := *parses
			tCtx := ottlspan.NewTransformContext(l.rs, l.ss, l.span)
			for i, c := range parsed {
				want, wantErr := c.std.Eval(ctx, tCtx)
				got, gotErr := c.memo.Eval(ctx, tCtx)
				if d := sameResult(got, want, gotErr, wantErr); d != "" {
					t.Fatalf("round %d, span %s, %s: %s", round, l.span.Name(), conds[i], d)
				}
				if want {
					held[conds[i]]++
				}
				if wantErr != nil {
					errs++
				}
			}
			tCtx.Close()
			if n := *parses - before; n > 2 {
				t.Errorf("span %s: %d parses, want at most 2", l.span.Name(), n)
			} else if n > 0 {
				jsonSpans++
			}
		}
	}
	// Not vacuous: every condition held somewhere, some failed, JSON was
	// parsed at the tool spans.
	for _, c := range conds {
		if held[c] == 0 {
			t.Errorf("never held: %s", c)
		}
	}
	if errs == 0 || jsonSpans < 45 {
		t.Errorf("%d errors, %d spans parsed JSON", errs, jsonSpans)
	}
	checkEntriesUnchanged(t, std, m)
}

// checkEntriesUnchanged compares every remembered result with a fresh parse
// of its text: nothing that read it changed it.
func checkEntriesUnchanged(t *testing.T, std *spanParser, m *jsonMemo) {
	t.Helper()
	e, err := std.ParseValueExpression(`ParseJSON(span.attributes["x"])`)
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range m.entries {
		if !entry.used {
			continue
		}
		rs, ss, sp := spanWith("x", entry.text)
		tCtx := ottlspan.NewTransformContext(rs, ss, sp)
		want, wantErr := e.Eval(context.Background(), tCtx)
		tCtx.Close()
		if d := sameResult(entry.out, want, entry.err, wantErr); d != "" {
			t.Errorf("remembered ParseJSON(%.60q) changed: %s", entry.text, d)
		}
	}
}

// spanWith is a span with string attributes, key then value.
func spanWith(kv ...string) (ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) {
	rs := ptrace.NewResourceSpans()
	ss := rs.ScopeSpans().AppendEmpty()
	sp := ss.Spans().AppendEmpty()
	for i := 0; i+1 < len(kv); i += 2 {
		sp.Attributes().PutStr(kv[i], kv[i+1])
	}
	return rs, ss, sp
}

// The memoised ParseJSON returns OTTL's result and error for any text: on a
// miss, on the hit that follows, and after another text came between; and
// decodeJSON, where it decides, gives OTTL's result.
func FuzzMemoisedParseJSON(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"a": 1}`, `[1, "x", null, {"b": [true, 2.5]}]`},
		{`{"output": {"kwargs": {"content": "{\"room\": \"kitchen\", \"unsafe\": false}"}}}`, `{"room": "hall"}`},
		{`1`, `"s"`}, {`null`, ``}, {`{`, `{"a": 1}{`}, {`{"a": 1, "a": 2}`, "\xff"}, {`[]`, `{}`},
		{`{"a": 1e999}`, `{"\u00e9": "\ud800"}`}, {` {"a":1} `, `{"a":1}`},
		// numbers: exponents, big and small, integers past 2^53, -0, and
		// what strconv reads but JSON does not
		{`[1e3, 1E+3, 2.5e-3, -0, -0.0, 0e0, 1e308, 1e-400, 4.9e-324]`, `[9007199254740993, 123456789012345678901234567890, -1e999]`},
		{`[01]`, `[1., .5, -.5, +1, 1e, 1e+, 0x10, 1_0, Infinity, NaN, -]`},
		// escapes: every short one, unicode, pairs, lone and reversed
		// surrogates, bad hex, a raw control byte, invalid UTF-8
		{`["\" \\ \/ \b \f \n \r \t", "\u0000\u001f\u00e9\u4e2d\uFFFF"]`, `["\ud83d\ude00", "\ud83d", "\ude00\ud83d", "\ud83d\u0041", "\ud83d\ud83d\ude00"]`},
		{`["\uD83D\uDE00x", "a\ud800"]`, `["\u12", "\u12g4", "\x", "\` + "\n" + `"]`},
		{"[\"tab\there\"]", "[\"\xff\xfe\", \"\xed\xa0\x80\", \"caf\xc3\xa9\"]"},
		// nesting (TestMemoisedParseJSONDeep goes past the limits)
		{strings.Repeat("[", 40) + strings.Repeat("]", 40), `[[[{"a": [{}]}]], [], {"b": {"c": [[{"d": null}]]}}]`},
		// duplicate keys, of every kind, and the empty key
		{`{"a": {"x": 1}, "a": {"y": 2}, "b": [1], "b": null, "": 1, "": 2}`, `{"a": 1, "b": 2, "a": "x", "a": [true]}`},
		// whitespace, every kind and some that is not
		{" \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" :\ttrue\n}\r\n ", "\v{}"},
		{"{}\u00a0", "[1,2]\x00"}, {"{\"a\":1}\x00garbage", "[\"a\x00b\"]"},
		// trailing garbage and truncation
		{`{"a":1}}`, `[1,2]x`}, {`{"a":1} {"b":2}`, `{"a":"x`}, {`[1,]`, `{"a":1,}`}, {`{"a" 1}`, `[1 2]`},
		{`[true, false, null]`, `[tru, nul, falsey, nullx]`}, {`{null: 1}`, `{"a":}`},
		// brackets and commas in strings, brackets that do not match
		{`["[,{\"", {"a,]": "},"}, [[], {}], ",,"]`, `]}[{`}, {`[1,,2]`, `{"a":[1,2}`},
	} {
		f.Add(seed[0], seed[1])
	}
	check := parseJSONChecker(f)
	f.Fuzz(func(t *testing.T, a, b string) { check(t, a, b, a, a) })
}

// parseJSONChecker checks texts one after the other through one memo: its
// ParseJSON gives OTTL's result and error, decodeJSON (where it decides)
// OTTL's result, and the remembered results stay unchanged.
func parseJSONChecker(t testing.TB) func(*testing.T, ...string) {
	std, memo, m, _ := twoParsers(t)
	var exprs [2]*ottl.ValueExpression[*ottlspan.TransformContext]
	for i, p := range []*spanParser{std, memo} {
		e, err := p.ParseValueExpression(`ParseJSON(span.attributes["x"])`)
		if err != nil {
			t.Fatal(err)
		}
		exprs[i] = e
	}
	ctx := context.Background()
	return func(t *testing.T, texts ...string) {
		t.Helper()
		for _, text := range texts {
			rs, ss, sp := spanWith("x", text)
			tCtx := ottlspan.NewTransformContext(rs, ss, sp)
			want, wantErr := exprs[0].Eval(ctx, tCtx)
			got, gotErr := exprs[1].Eval(ctx, tCtx)
			tCtx.Close()
			if d := sameResult(got, want, gotErr, wantErr); d != "" {
				t.Fatalf("ParseJSON(%.80q): %s", text, d)
			}
			if out, ok := decodeJSON(text); ok {
				if d := sameResult(out, want, nil, wantErr); d != "" {
					t.Fatalf("decodeJSON(%.80q): %s", text, d)
				}
			}
		}
		checkEntriesUnchanged(t, std, m)
	}
}

// Texts too deep for the fuzz seeds (OTTL takes about a tenth of a second
// on each, and the fuzz test parses its remembered texts again at every
// run): at decodeJSON's limit, past it, and past goccy's.
func TestMemoisedParseJSONDeep(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	parseJSONChecker(t)(t, deep("[", "]", maxJSONDepth), deep(`{"a":`, "}", maxJSONDepth+1),
		deep("[", "]", maxJSONDepth+1), deep(`[{"a":`, "}]", 5000), deep("[", "]", 10001))
}

// Bad JSON read by three predicates fails each of them, at every span, as
// OTTL's ParseJSON does: the memo returns the error to each condition, and
// each is counted.
func TestMemoisedParseJSONErrorsCountPerCondition(t *testing.T) {
	var cfg Config
	for _, name := range []string{"a", "b", "c"} {
		cfg.Predicates = append(cfg.Predicates, Named{Name: name, Predicate: Predicate{Condition: `ParseJSON(span.attributes["x"])["k"] == 1`}})
	}
	cfg.Events = &Predicate{Condition: "true"}
	var failed []string
	s := mustCompile(t, cfg, func(p string, err error) { failed = append(failed, p+": "+err.Error()) })
	rs, ss, sp := spanWith("x", `{"k": 1`)
	for range 2 {
		if ok, sig := s.Eval(rs, ss, sp); !ok || sig != 0 {
			t.Errorf("Eval %v %b", ok, sig)
		}
	}
	if len(failed) != 6 || failed[0] != failed[3] || !strings.HasPrefix(failed[2], "c: ") {
		t.Errorf("errors %q, want each of a, b, c twice", failed)
	}
}

// auditedConverters are the standard converters of OTTL v1.4.1, read for
// whether one writes into an argument: none does. A result the memo hands to
// several conditions is safe only while that holds, so a new OTTL with other
// converters fails here until they are read too. append and delete_index,
// which write, are editors: a condition cannot call them.
var auditedConverters = strings.Fields(`Base64Encode Bool Coalesce CommunityID Concat ContainsValue
	ConvertAttributesToElementsXML ConvertCase ConvertTextToElementsXML Day Decode Double Duration
	ExtractGrokPatterns ExtractPatterns FNV Format FormatTime GetXML HasPrefix HasSuffix Hex Hour Hours
	Index InsertXML Int IsBool IsDouble IsEmpty IsInCIDR IsInt IsList IsMap IsMatch IsString IsValidLuhn
	Keys Len Log MD5 Microseconds Milliseconds Minute Minutes Month Murmur3Hash Murmur3Hash128 Nanosecond
	Nanoseconds Now ParseCSV ParseInt ParseJSON ParseKeyValue ParseSeverity ParseSimplifiedXML ParseXML
	RemoveXML SHA1 SHA256 SHA512 Second Seconds SliceToMap Sort SpanID Split String Substring Time
	ToCamelCase ToKeyValueString ToLowerCase ToSnakeCase ToUpperCase TraceID Trim TrimPrefix TrimSuffix
	TruncateTime URL UUID UUIDv7 Unix UnixMicro UnixMilli UnixNano UnixSeconds UserAgent Values Weekday
	XXH128 XXH3 Year append delete_index`)

// A condition cannot change a result it shares with others: the converters
// are the ones audited, the two that write cannot be called from a
// condition, and the converters that take maps and lists, called on
// memoised results, leave them as they were.
func TestConvertersLeaveMemoisedResults(t *testing.T) {
	var names []string
	for name := range ottlfuncs.StandardConverters[*ottlspan.TransformContext]() {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, auditedConverters) {
		t.Errorf("OTTL's converters changed: read the new ones for writes into their arguments (jsonmemo.go), then update the list\n got %v\nwant %v", names, auditedConverters)
	}
	std, memo, m, _ := twoParsers(t)
	for _, c := range []string{`append(ParseJSON(span.attributes["l"]), 1) == nil`, `delete_index(ParseJSON(span.attributes["l"]), 0) == nil`} {
		if _, err := memo.ParseCondition(c); err == nil {
			t.Errorf("a condition may call an editor: %s", c)
		}
	}
	rs, ss, sp := spanWith("m", `{"b": 2, "a": [3, 1, 2], "c": {"d": "x"}}`, "l", `[3, 1, {"e": 1}, 2]`)
	tCtx := ottlspan.NewTransformContext(rs, ss, sp)
	defer tCtx.Close()
	const mp, ls = `ParseJSON(span.attributes["m"])`, `ParseJSON(span.attributes["l"])`
	for _, c := range []string{
		`Keys(` + mp + `) != nil`, `Values(` + mp + `) != nil`, `Len(` + mp + `) > 0`, `Len(` + ls + `) > 0`,
		`Sort(` + mp + `["a"]) != nil`, `Sort(` + mp + `["a"], "desc") != nil`, `Sort(` + ls + `) != nil`,
		`ToKeyValueString(` + mp + `, "=", " ", true) != ""`, `SliceToMap(` + ls + `) != nil`,
		`ContainsValue(` + ls + `, 1)`, `Index(` + ls + `, 1) >= 0`, `IsMap(` + mp + `)`, `IsList(` + ls + `)`,
		`IsEmpty(` + mp + `) == false`, `String(` + mp + `) != ""`, `Format("%v", [` + mp + `]) != ""`,
		`Coalesce([` + mp + `]) != nil`, `Concat([String(` + ls + `)], "") != ""`, `Len(Values(` + mp + `["c"])) == 1`,
	} {
		cond, err := memo.ParseCondition(c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		_, _ = cond.Eval(context.Background(), tCtx) // errors are OTTL's; only the memo matters here
	}
	if used := slices.IndexFunc(m.entries[:], func(e memoEntry) bool { return !e.used }); used != 2 {
		t.Fatalf("%d texts remembered, want the 2", used)
	}
	checkEntriesUnchanged(t, std, m)
}
