// SPDX-License-Identifier: Apache-2.0

// Package formula parses and evaluates boolean formulas over named
// predicates: `fork_on_burner and not (knob_on or lid)`. The operators are
// and, or, not (also &&, ||, !) and parentheses; not binds tighter than and,
// and tighter than or; and and or associate to the left.
//
// A formula is evaluated over a bit vector whose bit i is the value of the
// i-th declared predicate, so evaluation is a walk of a small tree that
// allocates nothing.
package formula

import (
	"fmt"
	"strings"
)

// MaxPredicates is the number of predicates a bit vector holds.
const MaxPredicates = 64

// Error is a parse error at a 1-based column of the source.
type Error struct {
	Col int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("col %d: %s", e.Col, e.Msg) }

// Formula is a parsed boolean formula over a fixed list of predicates.
type Formula struct {
	root node
}

// Parse parses src over the declared predicates; bit i of an evaluation is
// predicates[i]. An unknown name is an error that lists the declared ones.
func Parse(src string, predicates []string) (*Formula, error) {
	if len(predicates) > MaxPredicates {
		return nil, fmt.Errorf("%d predicates: at most %d fit a bit vector", len(predicates), MaxPredicates)
	}
	p := &parser{lex: lexer{src: src}, names: predicates}
	p.advance()
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tokBad {
		return nil, p.badChar()
	}
	if p.tok.kind != tokEOF {
		return nil, p.errorf("unexpected %q after the end of the formula", p.tok.text)
	}
	return &Formula{root: root}, nil
}

// Eval evaluates the formula; bit i of bits is the value of predicate i.
func (f *Formula) Eval(bits uint64) bool { return f.root.eval(bits) }

// EvalBools evaluates the formula over one value per declared predicate.
func (f *Formula) EvalBools(values []bool) bool {
	var bits uint64
	for i, v := range values {
		if v {
			bits |= 1 << uint(i)
		}
	}
	return f.root.eval(bits)
}

// String prints the formula back with keywords and the parentheses it needs;
// parsing the result gives the same formula.
func (f *Formula) String() string {
	var b strings.Builder
	f.root.write(&b, precOr)
	return b.String()
}
