// SPDX-License-Identifier: Apache-2.0

package formula

import "strings"

// Precedence levels, loosest first; a node prints parentheses when its
// context binds tighter than itself.
const (
	precOr = iota
	precAnd
	precNot
)

type node interface {
	eval(bits uint64) bool
	write(b *strings.Builder, ctx int)
}

type varNode struct {
	name string
	bit  uint
}

func (n varNode) eval(bits uint64) bool           { return bits>>n.bit&1 == 1 }
func (n varNode) write(b *strings.Builder, _ int) { b.WriteString(n.name) }

type notNode struct{ x node }

func (n notNode) eval(bits uint64) bool { return !n.x.eval(bits) }
func (n notNode) write(b *strings.Builder, _ int) {
	b.WriteString("not ")
	n.x.write(b, precNot)
}

type binNode struct {
	and  bool
	l, r node
}

func (n binNode) eval(bits uint64) bool {
	if n.and {
		return n.l.eval(bits) && n.r.eval(bits)
	}
	return n.l.eval(bits) || n.r.eval(bits)
}

// write prints a left-associative chain; the right operand is printed one
// level tighter so that a or (b or c) keeps its parentheses.
func (n binNode) write(b *strings.Builder, ctx int) {
	prec, op := precOr, " or "
	if n.and {
		prec, op = precAnd, " and "
	}
	if ctx > prec {
		b.WriteByte('(')
	}
	n.l.write(b, prec)
	b.WriteString(op)
	n.r.write(b, prec+1)
	if ctx > prec {
		b.WriteByte(')')
	}
}
