// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"fmt"
	"unicode/utf8"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokNum
	tokOp
	tokLParen
	tokRParen
	tokComma
)

// token is one lexical item and its byte offset in the source.
type token struct {
	kind tokKind
	text string
	off  int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokIdent:
		return fmt.Sprintf("name %q", t.text)
	case tokNum:
		return fmt.Sprintf("number %s", t.text)
	}
	return fmt.Sprintf("'%s'", t.text)
}

// lex splits src into tokens; the last is always tokEOF.
func lex(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
				j++
			}
			toks = append(toks, token{tokIdent, src[i:j], i})
			i = j
		case isDigit(c):
			j := i + 1
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			toks = append(toks, token{tokNum, src[i:j], i})
			i = j
		case c == '>' && i+1 < len(src) && src[i+1] == '>':
			toks = append(toks, token{tokOp, ">>", i})
			i += 2
		case c == '+' || c == '/' || c == '|' || c == '&' || c == '^' || c == '~' || c == '*':
			toks = append(toks, token{tokOp, src[i : i+1], i})
			i++
		case c == '(' || c == ')' || c == ',':
			toks = append(toks, token{punct(c), src[i : i+1], i})
			i++
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, &SyntaxError{Col: utf8.RuneCountInString(src[:i]) + 1, Msg: fmt.Sprintf("unexpected character %q", r)}
		}
	}
	return append(toks, token{tokEOF, "", len(src)}), nil
}

func punct(c byte) tokKind {
	switch c {
	case '(':
		return tokLParen
	case ')':
		return tokRParen
	}
	return tokComma
}

func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
