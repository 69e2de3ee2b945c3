// SPDX-License-Identifier: Apache-2.0

// Package texpr implements agentguard's temporal expressions: a parser for the
// text syntax, an incremental evaluator that runs assertions over a sequence of
// events, and the trace trees that explain each verdict. The semantics are
// those of docs/temporal-expressions.md.
package texpr

import (
	"strconv"
	"strings"
)

// Op is an expression operator.
type Op int

// The operators, in the order of the spec's table.
const (
	OpPred   Op = iota // a named predicate, or ok
	OpConcat           // a + b
	OpFusion           // a / b
	OpCond             // a >> b
	OpAlt              // a | b
	OpAnd              // a & b
	OpIsect            // a ^ b
	OpRepeat           // a * (n,m)
	OpNot              // ~a
	OpFirst            // first(a): a's first match, then the evaluation ends
	OpOnce             // once(a): at most one of a's matches per end cycle
)

// Expr is a node of a parsed expression.
type Expr struct {
	Op    Op
	Name  string // OpPred: the predicate's name; "ok" is the built-in true predicate
	Index int    // OpPred: the predicate's position in the declared list, -1 for ok
	L, R  *Expr  // operands: L alone for OpNot, OpRepeat, OpFirst and OpOnce
	Min   int    // OpRepeat: fewest iterations
	Max   int    // OpRepeat: most iterations
}

// OkName is the built-in predicate that holds at every event.
const OkName = "ok"

// level is the binding strength of an operator: higher binds tighter.
func level(op Op) int {
	switch op {
	case OpAlt:
		return 1
	case OpIsect:
		return 2
	case OpAnd:
		return 3
	case OpCond:
		return 4
	case OpConcat:
		return 5
	case OpFusion, OpRepeat:
		return 6
	case OpNot:
		return 7
	}
	return 8
}

// Symbol is the operator's text in the syntax.
func (op Op) Symbol() string {
	switch op {
	case OpConcat:
		return "+"
	case OpFusion:
		return "/"
	case OpCond:
		return ">>"
	case OpAlt:
		return "|"
	case OpAnd:
		return "&"
	case OpIsect:
		return "^"
	case OpRepeat:
		return "*"
	case OpNot:
		return "~"
	case OpFirst:
		return "first"
	case OpOnce:
		return "once"
	}
	return ""
}

// String prints the expression back in the text syntax, with the fewest
// parentheses that keep its structure: Parse(e.String()) is e again.
func (e *Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *Expr) write(b *strings.Builder) {
	switch e.Op {
	case OpPred:
		b.WriteString(e.Name)
	case OpNot:
		b.WriteString("~")
		writeOperand(b, e.L, level(OpNot), false)
	case OpFirst, OpOnce:
		b.WriteString(e.Op.Symbol() + "(")
		e.L.write(b)
		b.WriteString(")")
	case OpRepeat:
		writeOperand(b, e.L, level(OpRepeat), false)
		b.WriteString(" * ")
		if e.Min == e.Max {
			b.WriteString(strconv.Itoa(e.Min))
		} else {
			b.WriteString("(" + strconv.Itoa(e.Min) + "," + strconv.Itoa(e.Max) + ")")
		}
	default:
		writeOperand(b, e.L, level(e.Op), false)
		b.WriteString(" " + e.Op.Symbol() + " ")
		writeOperand(b, e.R, level(e.Op), true)
	}
}

// writeOperand parenthesises an operand that binds looser than its parent, and
// a right operand of equal strength, because the binary operators are
// left-associative.
func writeOperand(b *strings.Builder, x *Expr, parent int, right bool) {
	l := level(x.Op)
	if l < parent || (right && l == parent) {
		b.WriteString("(")
		x.write(b)
		b.WriteString(")")
		return
	}
	x.write(b)
}

// Equal reports whether two expressions have the same structure.
func (e *Expr) Equal(o *Expr) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.Op == o.Op && e.Name == o.Name && e.Index == o.Index && e.Min == o.Min && e.Max == o.Max &&
		e.L.Equal(o.L) && e.R.Equal(o.R)
}
