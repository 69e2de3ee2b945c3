// SPDX-License-Identifier: Apache-2.0

package formula

import (
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/internal/spelling"
)

// parser is a recursive-descent parser with one method a precedence level
// and one token of lookahead.
type parser struct {
	lex   lexer
	tok   token
	names []string
}

func (p *parser) advance() { p.tok = p.lex.next() }

func (p *parser) errorf(format string, args ...any) error {
	return &Error{Col: p.tok.col, Msg: fmt.Sprintf(format, args...)}
}

// parseOr: and-term { or and-term }, left-associative.
func (p *parser) parseOr() (node, error) {
	l, err := p.parseAnd()
	for err == nil && p.tok.kind == tokOr {
		p.advance()
		var r node
		if r, err = p.parseAnd(); err == nil {
			l = binNode{and: false, l: l, r: r}
		}
	}
	return l, err
}

// parseAnd: unary { and unary }, left-associative.
func (p *parser) parseAnd() (node, error) {
	l, err := p.parseUnary()
	for err == nil && p.tok.kind == tokAnd {
		p.advance()
		var r node
		if r, err = p.parseUnary(); err == nil {
			l = binNode{and: true, l: l, r: r}
		}
	}
	return l, err
}

// parseUnary: not unary | primary.
func (p *parser) parseUnary() (node, error) {
	if p.tok.kind != tokNot {
		return p.parsePrimary()
	}
	p.advance()
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	return notNode{x}, nil
}

// parsePrimary: name | ( or-formula ).
func (p *parser) parsePrimary() (node, error) {
	switch t := p.tok; t.kind {
	case tokName:
		for i, name := range p.names {
			if name == t.text {
				p.advance()
				return varNode{name: name, bit: uint(i)}, nil
			}
		}
		return nil, p.errorf("unknown predicate %q (declared: %s)%s", t.text, declared(p.names), spelling.DidYouMean(t.text, p.names))
	case tokLParen:
		p.advance()
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tokRParen {
			return nil, p.errorf("missing closing ) for ( at col %d", t.col)
		}
		p.advance()
		return x, nil
	case tokEOF:
		return nil, p.errorf("unexpected end of formula")
	case tokBad:
		return nil, p.badChar()
	default:
		return nil, p.errorf("unexpected %q", t.text)
	}
}

// badChar reports a character no token starts with.
func (p *parser) badChar() error {
	if t := p.tok.text; t == "&" || t == "|" {
		return p.errorf("unexpected %q (did you mean %q?)", t, t+t)
	}
	return p.errorf("unexpected character %q", p.tok.text)
}

func declared(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
