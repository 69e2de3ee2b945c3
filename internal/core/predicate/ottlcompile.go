// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"cmp"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Conditions over a tool's JSON output, such as the household example's
//
//	ParseJSON(ParseJSON(span.attributes["output.value"])["output"]["kwargs"]["content"])["room"] != "kitchen"
//
// cost more in OTTL's machinery than the rest of the processor: each
// ParseJSON is a memo lookup over the whole text, each index a map lookup
// in values built for the purpose. A condition in the subset below is
// compiled into direct reads: every text is scanned once per span for the
// keys all compiled conditions read (jsonsparse.go), and the comparisons
// are OTTL's own, on scalars.
//
//	condition  = term {"or" term}
//	term       = value {"and" value}
//	value      = ["not"] ("true" | "false" | "(" condition ")" | operand op operand)
//	operand    = literal | read
//	read       = ("span" | "resource") ".attributes[" string "]"
//	           | "ParseJSON(" read ")" {"[" string "]"}+
//	literal    = string | integer | decimal | "true" | "false" | "nil"
//
// Anything else (another path or converter, a string with escapes, a
// negative number) is not compiled: the condition runs as OTTL, as before.
//
// The compiled form gives OTTL's result or declines, per span: it reads
// operands in OTTL's order, stops where OTTL stops ("and" at false, "or" at
// true), and declines wherever OTTL would fail (a key missing, a text that
// is not JSON, an index into something not an object) or where it is not
// sure to read the value OTTL reads (an object or array compared, JSON it
// leaves to OTTL's parser). Where it declines, the condition runs as OTTL,
// so that the result, an error, and its count are exactly OTTL's.
// TestCompiledConditionsAreOTTLs and FuzzCompiledConditions compare the two.

// cnode is a compiled boolean expression.
type cnode struct {
	kind  cnodeKind
	kids  []*cnode   // and, or
	not   bool       // negated (a value's "not")
	op    compareOp  // compare
	args  [2]operand // compare: left, right
	truth bool       // constant
}

type cnodeKind uint8

const (
	cConst cnodeKind = iota
	cAnd
	cOr
	cCompare
)

type compareOp uint8

const (
	opEq compareOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

var compareOps = map[string]compareOp{"==": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

// operand is a literal or a slot read at the span.
type operand struct {
	slot int // -1: the literal
	lit  scalar
}

// readPlan is every read the compiled conditions of a Set make: slots, and
// how each is filled. A slot is an attribute's value or a key of a parsed
// text (a doc); docs parse an attribute's text or a slot's string.
type readPlan struct {
	attrs []attrRead // by slot; a doc's slot has kind attrNone
	docs  []jsonDoc
	slots int
}

type attrRead struct {
	kind attrKind
	key  string
	doc  int // the doc that fills the slot, for attrNone
}

type attrKind uint8

const (
	attrNone attrKind = iota
	attrSpan
	attrResource
)

// jsonDoc is one ParseJSON: of the text in slot from.
type jsonDoc struct {
	from int
	keys []*keyNode
}

// compileOTTL compiles text into plan, or returns nil where text is not in
// the subset (plan is then unchanged).
func compileOTTL(text string, plan *readPlan) *cnode {
	toks, ok := lexOTTL(text)
	if !ok {
		return nil
	}
	work := plan.clone()
	p := cparser{toks: toks, plan: &work}
	n := p.condition()
	if n == nil || p.pos != len(p.toks) {
		return nil
	}
	*plan = work
	return n
}

func (rp *readPlan) clone() readPlan {
	out := readPlan{attrs: append([]attrRead(nil), rp.attrs...), slots: rp.slots}
	for _, d := range rp.docs {
		out.docs = append(out.docs, jsonDoc{from: d.from, keys: cloneKeys(d.keys)})
	}
	return out
}

func cloneKeys(nodes []*keyNode) []*keyNode {
	out := make([]*keyNode, len(nodes))
	for i, n := range nodes {
		out[i] = &keyNode{key: n.key, slot: n.slot, kids: cloneKeys(n.kids)}
	}
	return out
}

// attrSlot is the slot of an attribute's value, shared by every read of it.
func (rp *readPlan) attrSlot(kind attrKind, key string) int {
	for i, a := range rp.attrs {
		if a.kind == kind && a.key == key {
			return i
		}
	}
	return rp.newSlot(attrRead{kind: kind, key: key})
}

func (rp *readPlan) newSlot(a attrRead) int {
	rp.attrs = append(rp.attrs, a)
	rp.slots++
	return rp.slots - 1
}

// keySlot is the slot of ParseJSON(slot from)[keys...].
func (rp *readPlan) keySlot(from int, keys []string) int {
	d := -1
	for i := range rp.docs {
		if rp.docs[i].from == from {
			d = i
		}
	}
	if d < 0 {
		rp.docs = append(rp.docs, jsonDoc{from: from})
		d = len(rp.docs) - 1
	}
	nodes := &rp.docs[d].keys
	var n *keyNode
	for _, k := range keys {
		if n = findKey(*nodes, k); n == nil {
			n = &keyNode{key: k, slot: -1}
			*nodes = append(*nodes, n)
		}
		nodes = &n.kids
	}
	if n.slot < 0 {
		n.slot = rp.newSlot(attrRead{doc: d})
	}
	return n.slot
}

// The lexer: identifiers keep their dots (span.attributes is one token).

type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number, 'o' comparison, or the punctuation itself
	text string
}

func lexOTTL(s string) ([]token, bool) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '[' || c == ']':
			out = append(out, token{kind: c})
			i++
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 || strings.ContainsRune(s[i+1:i+1+j], '\\') {
				return nil, false // a string with escapes stays OTTL's
			}
			out = append(out, token{kind: 's', text: s[i+1 : i+1+j]})
			i += j + 2
		case strings.IndexByte("=!<>", c) >= 0:
			j := i + 1
			if j < len(s) && s[j] == '=' {
				j++
			}
			if _, ok := compareOps[s[i:j]]; !ok {
				return nil, false
			}
			out = append(out, token{kind: 'o', text: s[i:j]})
			i = j
		case '0' <= c && c <= '9':
			j := i
			for j < len(s) && ('0' <= s[j] && s[j] <= '9' || s[j] == '.') {
				j++
			}
			out = append(out, token{kind: 'n', text: s[i:j]})
			i = j
		case isIdentByte(c):
			j := i
			for j < len(s) && (isIdentByte(s[j]) || '0' <= s[j] && s[j] <= '9' || s[j] == '.') {
				j++
			}
			out = append(out, token{kind: 'i', text: s[i:j]})
			i = j
		default:
			return nil, false
		}
	}
	return out, true
}

func isIdentByte(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// cparser parses the subset; every method returns nil (or false) where the
// text leaves it.
type cparser struct {
	toks []token
	pos  int
	plan *readPlan
}

func (p *cparser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *cparser) word(w string) bool {
	if t := p.peek(); t.kind == 'i' && t.text == w {
		p.pos++
		return true
	}
	return false
}

func (p *cparser) punct(c byte) bool {
	if p.peek().kind == c {
		p.pos++
		return true
	}
	return false
}

func (p *cparser) condition() *cnode { return p.list(cOr, "or", p.term) }

func (p *cparser) term() *cnode { return p.list(cAnd, "and", p.value) }

func (p *cparser) list(kind cnodeKind, sep string, item func() *cnode) *cnode {
	n := item()
	if n == nil {
		return nil
	}
	kids := []*cnode{n}
	for p.word(sep) {
		if n = item(); n == nil {
			return nil
		}
		kids = append(kids, n)
	}
	if len(kids) == 1 {
		return kids[0]
	}
	return &cnode{kind: kind, kids: kids}
}

func (p *cparser) value() *cnode {
	not := p.word("not")
	var n *cnode
	switch {
	case p.punct('('):
		if n = p.condition(); n == nil || !p.punct(')') {
			return nil
		}
		if not {
			n = &cnode{kind: cAnd, kids: []*cnode{n}, not: true}
		}
		return n
	case p.isBoolConst():
		n = &cnode{kind: cConst, truth: p.toks[p.pos].text == "true"}
		p.pos++
	default:
		n = p.comparison()
	}
	if n != nil {
		n.not = not
	}
	return n
}

// isBoolConst: true or false standing as a value, not compared.
func (p *cparser) isBoolConst() bool {
	t := p.peek()
	if t.kind != 'i' || (t.text != "true" && t.text != "false") {
		return false
	}
	return p.pos+1 >= len(p.toks) || p.toks[p.pos+1].kind != 'o'
}

func (p *cparser) comparison() *cnode {
	left, ok := p.operand()
	if !ok {
		return nil
	}
	t := p.peek()
	if t.kind != 'o' {
		return nil
	}
	p.pos++
	right, ok := p.operand()
	if !ok {
		return nil
	}
	return &cnode{kind: cCompare, op: compareOps[t.text], args: [2]operand{left, right}}
}

func (p *cparser) operand() (operand, bool) {
	t := p.peek()
	switch t.kind {
	case 's':
		p.pos++
		return operand{slot: -1, lit: scalar{kind: jsonStr, s: t.text}}, true
	case 'n':
		p.pos++
		return numberLiteral(t.text)
	case 'i':
		switch t.text {
		case "true", "false":
			p.pos++
			return operand{slot: -1, lit: scalar{kind: jsonBool, b: t.text == "true"}}, true
		case "nil":
			p.pos++
			return operand{slot: -1, lit: scalar{kind: jsonNull}}, true
		}
	}
	slot, ok := p.read()
	return operand{slot: slot}, ok
}

// numberLiteral reads OTTL's integers (int64) and decimals (float64).
func numberLiteral(text string) (operand, bool) {
	if !strings.Contains(text, ".") {
		i, err := strconv.ParseInt(text, 10, 64)
		return operand{slot: -1, lit: scalar{kind: jsonInt, i: i}}, err == nil
	}
	whole, frac, _ := strings.Cut(text, ".")
	if whole == "" || frac == "" || strings.Contains(frac, ".") {
		return operand{}, false
	}
	f, err := strconv.ParseFloat(text, 64)
	return operand{slot: -1, lit: scalar{kind: jsonFloat, f: f}}, err == nil
}

// read is an attribute's slot, or a ParseJSON chain's.
func (p *cparser) read() (int, bool) {
	for _, a := range []struct {
		path string
		kind attrKind
	}{{"span.attributes", attrSpan}, {"resource.attributes", attrResource}} {
		if p.word(a.path) {
			key, ok := p.index()
			if !ok || p.peek().kind == '[' {
				return 0, false // an index into an attribute's value stays OTTL's
			}
			return p.plan.attrSlot(a.kind, key), true
		}
	}
	if !p.word(parseJSONName) || !p.punct('(') {
		return 0, false
	}
	from, ok := p.read()
	if !ok || !p.punct(')') {
		return 0, false
	}
	var keys []string
	for p.peek().kind == '[' {
		key, ok := p.index()
		if !ok {
			return 0, false
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return 0, false // a whole parsed value is compared as a map: OTTL's
	}
	return p.plan.keySlot(from, keys), true
}

// index is ["key"].
func (p *cparser) index() (string, bool) {
	if !p.punct('[') {
		return "", false
	}
	t := p.peek()
	if t.kind != 's' {
		return "", false
	}
	p.pos++
	return t.text, p.punct(']')
}

// compiledReads is a Set's reads at the span being evaluated.
type compiledReads struct {
	plan  readPlan
	slots []scalar
	docs  []docState
}

type docState uint8

const (
	docUnread docState = iota
	docRead
	docDeclined
)

func newCompiledReads(plan readPlan) *compiledReads {
	return &compiledReads{plan: plan, slots: make([]scalar, plan.slots), docs: make([]docState, len(plan.docs))}
}

// reset forgets the last span's reads.
func (r *compiledReads) reset() {
	clear(r.docs)
	for i, a := range r.plan.attrs {
		if a.kind != attrNone {
			r.slots[i].kind = jsonAbsent
		}
	}
}

// eval is n at the span: its value, and false where it declines.
func (ev *evaluation) evalCompiled(n *cnode) (result, sure bool) {
	switch n.kind {
	case cConst:
		result, sure = n.truth, true
	case cCompare:
		a, ok1 := ev.operand(n.args[0])
		if !ok1 {
			return false, false
		}
		b, ok2 := ev.operand(n.args[1])
		if !ok2 {
			return false, false
		}
		result, sure = compareScalars(a, b, n.op), true
	default:
		stop := n.kind == cOr // or stops at true, and at false
		result, sure = !stop, true
		for _, k := range n.kids {
			r, ok := ev.evalCompiled(k)
			if !ok {
				return false, false
			}
			if r == stop {
				result = stop
				break
			}
		}
	}
	return result != n.not, sure
}

func (ev *evaluation) operand(o operand) (scalar, bool) {
	if o.slot < 0 {
		return o.lit, true
	}
	v := ev.slot(o.slot)
	return v, v.kind != jsonAbsent && v.kind != jsonUnsure
}

// slot reads slot i at the span, once.
func (ev *evaluation) slot(i int) scalar {
	r := ev.set.compiled
	a := r.plan.attrs[i]
	switch a.kind {
	case attrSpan, attrResource:
		if r.slots[i].kind == jsonAbsent {
			r.slots[i] = ev.attribute(a)
		}
		return r.slots[i]
	}
	switch r.docs[a.doc] {
	case docUnread:
		r.docs[a.doc] = docDeclined
		doc := r.plan.docs[a.doc]
		for _, n := range doc.keys {
			n.clear(r.slots) // the last span's values
		}
		if text := ev.slot(doc.from); text.kind == jsonStr && sparseObject(text.s, doc.keys, r.slots) {
			r.docs[a.doc] = docRead
		}
	case docDeclined:
		return scalar{}
	}
	if r.docs[a.doc] != docRead {
		return scalar{}
	}
	return r.slots[i]
}

// attribute is the scalar OTTL reads at span.attributes[key] (or the
// resource's): nil where there is none.
func (ev *evaluation) attribute(a attrRead) scalar {
	attrs := ev.span.Attributes()
	if a.kind == attrResource {
		attrs = ev.rs.Resource().Attributes()
	}
	v, ok := attrs.Get(a.key)
	if !ok {
		return scalar{kind: jsonNull}
	}
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		return scalar{kind: jsonNull}
	case pcommon.ValueTypeStr:
		return scalar{kind: jsonStr, s: v.Str()}
	case pcommon.ValueTypeBool:
		return scalar{kind: jsonBool, b: v.Bool()}
	case pcommon.ValueTypeInt:
		return scalar{kind: jsonInt, i: v.Int()}
	case pcommon.ValueTypeDouble:
		return scalar{kind: jsonFloat, f: v.Double()}
	}
	return scalar{kind: jsonUnsure}
}

// compareScalars is OTTL's comparison (its ValueComparator) on scalars:
// nil equals only nil; numbers compare across int and float; values of
// different types are only unequal; bools order false before true.
func compareScalars(a, b scalar, op compareOp) bool {
	switch {
	case a.kind == jsonNull && b.kind == jsonNull:
		return op == opEq || op == opLe || op == opGe
	case a.kind == jsonNull || b.kind == jsonNull:
		return op == opNe
	case a.kind == jsonStr && b.kind == jsonStr:
		return ordered(cmp.Compare(a.s, b.s), op)
	case a.kind == jsonBool && b.kind == jsonBool:
		return ordered(boolOrder(a.b, b.b), op)
	case a.kind == jsonInt && b.kind == jsonInt:
		return ordered(cmp.Compare(a.i, b.i), op)
	case a.isNumber() && b.isNumber():
		return compareFloats(a.float(), b.float(), op)
	}
	return op == opNe
}

func (v scalar) isNumber() bool { return v.kind == jsonInt || v.kind == jsonFloat }

func (v scalar) float() float64 {
	if v.kind == jsonInt {
		return float64(v.i)
	}
	return v.f
}

// compareFloats compares as Go's operators do, so that NaN is unequal to
// everything and unordered, as in OTTL.
func compareFloats(a, b float64, op compareOp) bool {
	switch op {
	case opEq:
		return a == b
	case opNe:
		return a != b
	case opLt:
		return a < b
	case opLe:
		return a <= b
	case opGt:
		return a > b
	}
	return a >= b
}

func ordered(c int, op compareOp) bool {
	switch op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
