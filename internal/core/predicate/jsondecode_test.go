// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/ottlfuncs"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// ottlParseJSON is OTTL's own ParseJSON of a text, through a parser with
// the standard converters.
func ottlParseJSON(t testing.TB) func(string) (any, error) {
	t.Helper()
	p, err := ottlspan.NewParser(ottlfuncs.StandardConverters[*ottlspan.TransformContext](), componenttest.NewNopTelemetrySettings(), ottlspan.EnablePathContextNames())
	if err != nil {
		t.Fatal(err)
	}
	e, err := p.ParseValueExpression(`ParseJSON(span.attributes["x"])`)
	if err != nil {
		t.Fatal(err)
	}
	return func(text string) (any, error) {
		rs, ss, sp := spanWith("x", text)
		tCtx := ottlspan.NewTransformContext(rs, ss, sp)
		defer tCtx.Close()
		return e.Eval(context.Background(), tCtx)
	}
}

// householdTexts are the texts the household predicates parse: each tool
// span's output, and the content inside it.
func householdTexts(t testing.TB) []string {
	parse := ottlParseJSON(t)
	var out []string
	for _, l := range householdSpans(t) {
		v, ok := l.span.Attributes().Get("output.value")
		if !ok {
			continue
		}
		parsed, err := parse(v.Str())
		if err != nil {
			continue
		}
		out = append(out, v.Str())
		if o, ok := parsed.(pcommon.Map).Get("output"); ok && o.Type() == pcommon.ValueTypeMap {
			if k, ok := o.Map().Get("kwargs"); ok && k.Type() == pcommon.ValueTypeMap {
				if c, ok := k.Map().Get("content"); ok {
					out = append(out, c.Str())
				}
			}
		}
	}
	return out
}

// decodeJSON decides the JSON it is meant to, the household texts first,
// with OTTL's result, and declines the rest: whatever OTTL rejects, what
// goccy accepts though it is not JSON, and what is past its limits.
func TestDecodeJSON(t *testing.T) {
	parse := ottlParseJSON(t)
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
		}
		return "{" + b.String() + "}"
	}
	household := householdTexts(t)
	if len(household) < 90 {
		t.Fatalf("%d household texts", len(household))
	}
	decided := append(household,
		`{}`, `[]`, ` { } `, "\t[\r\n]\n", `{"a": 1, "a": {"b": 2}, "a": [null]}`, `[1e3, -0, 2.5E-3, 1e-400, 9007199254740993]`,
		`["\ud800", "\ud83d\ude00", "\u00e9\u0000", "\"\\\/\b\f\n\r\t"]`, "[\"\xff\xed\xa0\x80\"]", `{"\u00e9": ""}`,
		strings.Repeat("[", maxJSONDepth)+strings.Repeat("]", maxJSONDepth), keys(maxJSONKeys),
		`[true, false, null, {"a": [{"b": {}}]}]`, `{"a,b": "[1,2]", "c": ["}", "{,", "\"]"]}`)
	for _, text := range decided {
		got, ok := decodeJSON(text)
		if !ok {
			t.Errorf("declined %.80q", text)
			continue
		}
		want, err := parse(text)
		if d := sameResult(got, want, nil, err); d != "" {
			t.Errorf("decodeJSON(%.80q): %s", text, d)
		}
	}
	for _, text := range []string{
		``, ` `, `1`, `"s"`, `null`, `true`, `{`, `[`, `{"a"}`, `{"a":}`, `[1,]`, `{"a":1,}`, `{"a":1}}`, `[1]x`, `{} {}`,
		`[01]`, `[1.]`, `[-]`, `[+1]`, `[.5]`, `[1e]`, `[1e999]`, `[-1e999]`, `[tru]`, `[nul]`, `[truex]`, `{null: 1}`,
		`["\x"]`, `["\u12"]`, `["\u12g4"]`, "[\"\t\"]", "[\"a\x00\"]", "{\"a\":1}\x00x", "\v{}", "{}\u00a0", `["a`, `["a\"]`,
		strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1), keys(maxJSONKeys + 1),
	} {
		if got, ok := decodeJSON(text); ok {
			t.Errorf("decodeJSON(%.80q) decided %v, want it left to OTTL", text, raw(got))
		}
	}
}

// decodeJSON gives what OTTL v1.4.1's ParseJSON gives with goccy/go-json
// v0.10.6, read for it: how each decodes numbers, strings and escapes, what
// each accepts. Another version fails here until it is read again
// (jsondecode.go says what to check), and the fuzz seeds rerun. (A test
// binary's build information lists no modules, so go.mod is read: since Go
// 1.17 it requires every module the build uses, at the version selected.)
func TestDecodeJSONMatchesTheVersionsRead(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{
		"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl v1.4.1",
		"github.com/goccy/go-json v0.10.6",
	} {
		if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(dep) + `( |$)`).Match(mod) {
			t.Errorf("go.mod does not require %s, which decodeJSON was checked against", dep)
		}
	}
	if regexp.MustCompile(`(goccy/go-json|pkg/ottl)( v\S+)? =>`).Match(mod) {
		t.Error("go.mod replaces OTTL or goccy/go-json, which decodeJSON was checked against")
	}
}

// BenchmarkParseJSON: a memo miss on the household texts (a tool's output,
// then the content in it), one op one text: ottl is OTTL's ParseJSON, the
// baseline; decode is decodeJSON.
func BenchmarkParseJSON(b *testing.B) {
	texts := householdTexts(b)
	m, err := newJSONMemo()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, run := range []struct {
		name  string
		parse func(string) bool
	}{
		{"ottl", func(s string) bool { m.text = s; _, err := m.ottlParse(ctx, nil); return err == nil }},
		{"decode", func(s string) bool { _, ok := decodeJSON(s); return ok }},
	} {
		b.Run(run.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if !run.parse(texts[i%len(texts)]) {
					b.Fatal("not parsed")
				}
				i++
			}
		})
	}
}
