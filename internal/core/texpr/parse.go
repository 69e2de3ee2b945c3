// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentguard/agentguard/internal/spelling"
)

// SyntaxError is a parse error at a column of the expression (1-based, in
// characters).
type SyntaxError struct {
	Col int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("col %d: %s", e.Col, e.Msg) }

// MaxRepeat bounds the iteration counts of a repeat, so that a typo cannot
// declare an effectively unbounded loop.
const MaxRepeat = 1 << 20

// Parse parses an expression whose identifiers must be among predicates (or
// the built-in ok). A predicate's Index is its position in predicates.
func Parse(src string, predicates []string) (*Expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: src, declared: predicates}
	e, err := p.binary(1)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errorf(t, "unexpected %s after a complete expression", t)
	}
	return e, nil
}

type parser struct {
	toks     []token
	pos      int
	src      string
	declared []string
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) errorf(t token, format string, args ...any) error {
	return &SyntaxError{Col: utf8.RuneCountInString(p.src[:t.off]) + 1, Msg: fmt.Sprintf(format, args...)}
}

// binaryOps maps an operator token to its operator and level.
func binaryOp(t token) (Op, bool) {
	if t.kind != tokOp {
		return 0, false
	}
	switch t.text {
	case "|":
		return OpAlt, true
	case "^":
		return OpIsect, true
	case "&":
		return OpAnd, true
	case ">>":
		return OpCond, true
	case "+":
		return OpConcat, true
	case "/":
		return OpFusion, true
	case "*":
		return OpRepeat, true
	}
	return 0, false
}

// binary parses operators of level lvl and tighter, left-associatively: one
// loop per precedence level, as in Python's grammar.
func (p *parser) binary(lvl int) (*Expr, error) {
	if lvl > level(OpRepeat) {
		return p.unary()
	}
	left, err := p.binary(lvl + 1)
	if err != nil {
		return nil, err
	}
	for {
		op, ok := binaryOp(p.peek())
		if !ok || level(op) != lvl {
			return left, nil
		}
		p.next()
		if op == OpRepeat {
			left, err = p.repeatCount(left)
		} else {
			var right *Expr
			right, err = p.binary(lvl + 1)
			left = &Expr{Op: op, L: left, R: right}
		}
		if err != nil {
			return nil, err
		}
	}
}

// repeatCount parses the right side of '*': n or (n,m).
func (p *parser) repeatCount(x *Expr) (*Expr, error) {
	t := p.peek()
	if t.kind == tokNum {
		n, err := p.count()
		if err != nil {
			return nil, err
		}
		return &Expr{Op: OpRepeat, L: x, Min: n, Max: n}, nil
	}
	if t.kind != tokLParen {
		return nil, p.errorf(t, "expected a repeat count n or (n,m) after '*', found %s", t)
	}
	p.next()
	lo, err := p.count()
	if err != nil {
		return nil, err
	}
	hi := lo
	if p.peek().kind == tokComma {
		p.next()
		if hi, err = p.count(); err != nil {
			return nil, err
		}
	}
	if t := p.next(); t.kind != tokRParen {
		return nil, p.errorf(t, "expected ')' to close the repeat count, found %s", t)
	}
	if hi < lo {
		return nil, p.errorf(t, "repeat range (%d,%d) is empty: the second count must not be less than the first", lo, hi)
	}
	return &Expr{Op: OpRepeat, L: x, Min: lo, Max: hi}, nil
}

func (p *parser) count() (int, error) {
	t := p.next()
	if t.kind != tokNum {
		return 0, p.errorf(t, "expected a repeat count, found %s", t)
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n > MaxRepeat {
		return 0, p.errorf(t, "repeat count %s is larger than %d", t.text, MaxRepeat)
	}
	return n, nil
}

func (p *parser) unary() (*Expr, error) {
	t := p.peek()
	if t.kind == tokOp && t.text == "~" {
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Expr{Op: OpNot, L: x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (*Expr, error) {
	t := p.next()
	switch t.kind {
	case tokIdent:
		if p.peek().kind == tokLParen {
			return p.call(t)
		}
		return p.predicate(t)
	case tokLParen:
		e, err := p.binary(1)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, p.errorf(c, "expected ')', found %s", c)
		}
		return e, nil
	}
	return nil, p.errorf(t, "expected a predicate name, '~' or '(', found %s", t)
}

// call parses first(x) or once(x). A name followed by '(' is always a call:
// a predicate cannot be followed by '(', so a predicate named first or once
// still reads as one where it stands alone.
func (p *parser) call(t token) (*Expr, error) {
	var op Op
	switch t.text {
	case "first":
		op = OpFirst
	case "once":
		op = OpOnce
	default:
		return nil, p.errorf(t, "unknown function %q: the functions are first(x) and once(x)", t.text)
	}
	p.next() // (
	x, err := p.binary(1)
	if err != nil {
		return nil, err
	}
	if c := p.next(); c.kind != tokRParen {
		return nil, p.errorf(c, "expected ')' to close %s(, found %s", t.text, c)
	}
	return &Expr{Op: op, L: x}, nil
}

func (p *parser) predicate(t token) (*Expr, error) {
	if t.text == OkName {
		return &Expr{Op: OpPred, Name: OkName, Index: -1}, nil
	}
	for i, name := range p.declared {
		if name == t.text {
			return &Expr{Op: OpPred, Name: name, Index: i}, nil
		}
	}
	declared := "none"
	if len(p.declared) > 0 {
		declared = strings.Join(p.declared, ", ")
	}
	return nil, p.errorf(t, "unknown predicate %q (declared: %s)%s", t.text, declared, spelling.DidYouMean(t.text, p.declared))
}
