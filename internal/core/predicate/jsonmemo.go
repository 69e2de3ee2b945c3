// SPDX-License-Identifier: Apache-2.0

package predicate

// Predicates that read a tool's JSON output each parse it: the household
// example's five parse the same two texts (the output, and the content
// inside it) fourteen times per span. A Set's OTTL parser therefore gets, in
// place of OTTL's ParseJSON, one that remembers its last results: the same
// text is parsed once, however many conditions read it.
//
// It cannot change a verdict:
//   - A miss decodes the text into pcommon values directly (decodeJSON, in
//     jsondecode.go: the result OTTL's ParseJSON gives, without its
//     intermediate map[string]any), or, where that declines (every error
//     among others), runs OTTL's own ParseJSON: a result or an error is
//     exactly OTTL's. A hit returns what the miss returned: the same value,
//     the same error to every condition that parses the text (each still
//     fails, and is counted, on its own).
//   - The key is the whole text, not where it came from.
//   - A condition cannot change a result it shares: OTTL's grammar lets a
//     condition call converters only (editors, which write, are statements),
//     and no standard converter writes into its arguments; they read them or
//     copy them (TestConvertersLeaveMemoisedResults pins the list audited).

import (
	"context"
	"errors"
	"reflect"
	"unsafe"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/ottlfuncs"
)

// memoSize is how many texts a memo remembers, oldest forgotten first: the
// household configuration needs two at a time. It bounds what the memo keeps
// alive after the spans it read are gone.
const memoSize = 8

// converters are OTTL's standard converters with ParseJSON memoised, for
// one Set: its conditions share the one memo. A Set is used by one goroutine
// at a time, so the memo takes no lock.
func (m *jsonMemo) converters() map[string]ottl.Factory[*ottlspan.TransformContext] {
	fs := ottlfuncs.StandardConverters[*ottlspan.TransformContext]()
	fs[parseJSONName] = ottl.NewFactory(parseJSONName, &parseJSONArgs{}, m.create)
	fs[detectName] = detectFactory() // agentguard's own: detectors.go
	return fs
}

const parseJSONName = "ParseJSON"

// parseJSONArgs are ParseJSON's arguments, as OTTL's own declares them.
type parseJSONArgs struct {
	Target ottl.StringGetter[*ottlspan.TransformContext]
}

// jsonMemo remembers the last memoSize texts ParseJSON was called on and
// OTTL's ParseJSON of each.
type jsonMemo struct {
	// parse is what a miss runs: m.miss, which a test may wrap.
	parse     func(context.Context, *ottlspan.TransformContext, string) (any, error)
	ottlParse ottl.ExprFunc[*ottlspan.TransformContext] // OTTL's ParseJSON of text
	text      string                                    // its argument, while it runs
	entries   [memoSize]memoEntry
	next      int // the entry to replace on the next miss
}

type memoEntry struct {
	text string
	out  any
	err  error
	used bool
}

// newJSONMemo builds OTTL's own ParseJSON with an argument that reads the
// memo's text, so that a miss decodeJSON declines runs exactly OTTL's code.
// Its arguments type is unexported: its Target field is set by reflection,
// checked here once.
func newJSONMemo() (*jsonMemo, error) {
	m := &jsonMemo{}
	std := ottlfuncs.NewParseJSONFactory[*ottlspan.TransformContext]()
	args := std.CreateDefaultArguments()
	getter := ottl.StringGetter[*ottlspan.TransformContext](ottl.StandardStringGetter[*ottlspan.TransformContext]{
		Getter: func(context.Context, *ottlspan.TransformContext) (any, error) { return m.text, nil },
	})
	v := reflect.ValueOf(args)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, errors.New("memoised ParseJSON: OTTL's ParseJSON arguments are not a struct; update jsonmemo.go")
	}
	target := v.Elem().FieldByName("Target")
	if !target.IsValid() || !target.CanSet() || target.Type() != reflect.TypeOf(&getter).Elem() {
		return nil, errors.New("memoised ParseJSON: OTTL's ParseJSON no longer takes a string Target; update jsonmemo.go")
	}
	target.Set(reflect.ValueOf(&getter).Elem())
	parse, err := std.CreateFunction(ottl.FunctionContext{}, args)
	if err != nil {
		return nil, err
	}
	m.ottlParse = parse
	m.parse = m.miss
	return m, nil
}

// miss is ParseJSON of text: decoded here, or by OTTL where decodeJSON
// declines.
func (m *jsonMemo) miss(ctx context.Context, tCtx *ottlspan.TransformContext, text string) (any, error) {
	if out, ok := decodeJSON(text); ok {
		return out, nil
	}
	m.text = text
	out, err := m.ottlParse(ctx, tCtx)
	m.text = ""
	return out, err
}

// create makes one call of ParseJSON in a condition: it reads its argument
// as OTTL's does (an error there is returned as OTTL returns it) and looks
// the text up.
func (m *jsonMemo) create(_ ottl.FunctionContext, a ottl.Arguments) (ottl.ExprFunc[*ottlspan.TransformContext], error) {
	args, ok := a.(*parseJSONArgs)
	if !ok {
		return nil, errors.New("ParseJSON: arguments must be of type *parseJSONArgs")
	}
	return func(ctx context.Context, tCtx *ottlspan.TransformContext) (any, error) {
		text, err := args.Target.Get(ctx, tCtx)
		if err != nil {
			return nil, err
		}
		return m.get(ctx, tCtx, text)
	}, nil
}

// get returns OTTL's ParseJSON of text, parsing it only if no entry holds it.
func (m *jsonMemo) get(ctx context.Context, tCtx *ottlspan.TransformContext, text string) (any, error) {
	for i := range m.entries {
		if e := &m.entries[i]; e.used && sameText(e.text, text) {
			return e.out, e.err
		}
	}
	out, err := m.parse(ctx, tCtx, text)
	m.entries[m.next] = memoEntry{text: text, out: out, err: err, used: true}
	m.next = (m.next + 1) % memoSize
	return out, err
}

// sameText compares lengths, then where the bytes are, and only then the
// bytes: the same attribute read again, or a string read from a remembered
// result, is found without reading it. Go strings are immutable and the
// entry keeps its text alive, so the same bytes are the same text.
func sameText(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
