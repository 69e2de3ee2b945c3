// SPDX-License-Identifier: Apache-2.0

package formula

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokAnd
	tokOr
	tokNot
	tokLParen
	tokRParen
	tokBad // a character no token starts with; text holds it
)

// token is one lexical item with its 1-based column.
type token struct {
	kind tokKind
	text string
	col  int
}

// lexer hands out tokens one at a time, in the manner of text/template/parse.
type lexer struct {
	src string
	pos int
}

var keywords = map[string]tokKind{"and": tokAnd, "or": tokOr, "not": tokNot}

func (l *lexer) next() token {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if start == len(l.src) {
		return token{tokEOF, "", start + 1}
	}
	c := l.src[start]
	emit := func(k tokKind, n int) token {
		l.pos += n
		return token{k, l.src[start:l.pos], start + 1}
	}
	switch {
	case c == '(':
		return emit(tokLParen, 1)
	case c == ')':
		return emit(tokRParen, 1)
	case c == '!':
		return emit(tokNot, 1)
	case c == '&' && l.peekByte(1) == '&':
		return emit(tokAnd, 2)
	case c == '|' && l.peekByte(1) == '|':
		return emit(tokOr, 2)
	case isLetter(c):
		n := 1
		for start+n < len(l.src) && (isLetter(l.src[start+n]) || isDigit(l.src[start+n])) {
			n++
		}
		if k, ok := keywords[l.src[start:start+n]]; ok {
			return emit(k, n)
		}
		return emit(tokName, n)
	}
	return emit(tokBad, 1)
}

func (l *lexer) peekByte(off int) byte {
	if l.pos+off < len(l.src) {
		return l.src[l.pos+off]
	}
	return 0
}

func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isLetter(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
