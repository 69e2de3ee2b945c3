// SPDX-License-Identifier: Apache-2.0

package detect

// A payment card number is 13 to 19 digits, either unbroken or grouped as
// printed on cards (4-4-4-4, 4-4-4-4-3, Amex 4-6-5, Diners 4-6-4) with
// one kind of separator, a space or a dash. It must be a whole number (no
// digit group continues it on either side), start with the issuer
// identification number of a known network at a length that network
// issues, and pass the Luhn check.
func findCard(text string) (start, end int, ok bool) {
	for i := nextDigit(text, 0); i < len(text); i = nextDigit(text, i) {
		if startsNumber(text, i) {
			if end, ok := cardAt(text, i); ok {
				return i, end, true
			}
		}
		i = runEnd(text, i, &digitByte)
	}
	return 0, 0, false
}

// startsNumber is whether a number may start at text[i], the first digit
// of a run: not inside a word, not the fraction of a decimal, not a
// signed or international number, and not a group continuing a number
// before it (`1234 4111…`, `2024-4111…`).
func startsNumber(text string, i int) bool {
	if !startsWord(text, i) {
		return false
	}
	if i == 0 {
		return true
	}
	switch text[i-1] {
	case '+':
		return false
	case '.', '-', ' ':
		return i < 2 || !digitByte[text[i-2]]
	}
	return true // a comma after a digit separates fields as often as decimals
}

// cardAt is the end of the card number starting at text[i], if there is
// one.
func cardAt(text string, i int) (end int, ok bool) {
	first := runEnd(text, i, &digitByte) - i
	switch {
	case first >= 13 && first <= 19:
		end = i + first
		if continuesNumber(text, end, 0) {
			return 0, false
		}
		var digits [19]byte
		n := copy(digits[:], text[i:end])
		return end, validCard(digits[:n])
	case first == 4:
		return groupedCardAt(text, i)
	}
	return 0, false
}

// continuesNumber is whether the number ending just before text[end] goes
// on: a letter or digit, a decimal fraction (.5), a dashed group, or, for
// a number grouped with spaces, another group. An unbroken number may be
// followed by a space and a digit (`4111111111111111 12/27`), and any
// number by a comma and a digit (a CSV field).
func continuesNumber(text string, end int, sep byte) bool {
	if end >= len(text) {
		return false
	}
	c := text[end]
	if alnumByte[c] {
		return true
	}
	if end+1 >= len(text) || !digitByte[text[end+1]] {
		return false
	}
	return c == '.' || c == '-' || (sep != 0 && c == sep)
}

// groupedCardAt is the end of the card number starting at text[i] with
// four digits and a separator: all the groups, or, when a spaced group of
// fewer than four digits follows the fourth (or an Amex's third), the
// groups before it, that short group being the CVC typed after the
// number: `4111 1111 1111 1111 123 12/27`.
func groupedCardAt(text string, i int) (end int, ok bool) {
	var g cardGroups
	if !g.read(text, i) {
		return 0, false
	}
	if g.count <= 5 && !continuesNumber(text, g.end, g.sep) {
		if end, ok := g.card(g.count); ok {
			return end, true
		}
	}
	if g.sep == ' ' {
		for _, groups := range []int{4, 3} {
			if g.count > groups && g.sizes[groups] < 4 {
				if end, ok := g.card(groups); ok {
					return end, true
				}
			}
		}
	}
	return 0, false
}

// cardGroups are the digit groups of a number grouped by one separator.
type cardGroups struct {
	sizes  [8]int
	ends   [8]int
	count  int
	digits [32]byte
	sep    byte
	end    int
}

// read reads the groups starting at text[i], four digits and a space or
// dash, then more groups after the same separator; false if there are
// more than a card and a CVC have.
func (g *cardGroups) read(text string, i int) bool {
	if i+5 >= len(text) || (text[i+4] != ' ' && text[i+4] != '-') {
		return false
	}
	g.sep = text[i+4]
	n := 0
	for j := i; ; {
		size := runEnd(text, j, &digitByte) - j
		if g.count == len(g.sizes) || n+size > len(g.digits) {
			return false
		}
		n += copy(g.digits[n:], text[j:j+size])
		j += size
		g.sizes[g.count], g.ends[g.count] = size, j
		g.count++
		if j+1 < len(text) && text[j] == g.sep && digitByte[text[j+1]] {
			j++
			continue
		}
		g.end = j
		return true
	}
}

// card is the end of the first groups, if they are a card number.
func (g *cardGroups) card(groups int) (end int, ok bool) {
	n := 0
	for _, s := range g.sizes[:groups] {
		n += s
	}
	if n > 19 || !cardGrouping(g.sizes[:groups]) || !validCard(g.digits[:n]) {
		return 0, false
	}
	return g.ends[groups-1], true
}

// cardGrouping is whether group lengths are a printed card layout: fours
// with a shorter or equal last group (four groups at least), or the
// 4-6-5 and 4-6-4 of Amex and Diners.
func cardGrouping(groups []int) bool {
	if len(groups) == 3 && groups[0] == 4 && groups[1] == 6 && (groups[2] == 5 || groups[2] == 4) {
		return true
	}
	if len(groups) < 4 {
		return false
	}
	for _, g := range groups[:len(groups)-1] {
		if g != 4 {
			return false
		}
	}
	last := groups[len(groups)-1]
	return last >= 1 && last <= 4
}

// validCard is whether the digits are a card number a known network
// issues (prefix and length) with a valid Luhn check digit.
func validCard(digits []byte) bool {
	return len(digits) >= 13 && knownIssuer(digits) && luhnValid(digits)
}

// cardNetwork is one issuer identification number range of a network and
// the lengths it issues. Maestro (50, 56–69, 12–19 digits) is left out on
// purpose: it would admit nearly every Luhn-valid number starting with 5
// or 6.
type cardNetwork struct {
	low, high int // inclusive range of the number's first `digits` digits
	digits    int
	min, max  int // the lengths the network issues
}

// cardNetworks from the networks' published IIN ranges (Visa, Mastercard
// with the 2-series, American Express, Discover, JCB, Diners Club,
// UnionPay, Mir).
var cardNetworks = []cardNetwork{
	// Visa
	{4, 4, 1, 13, 13}, {4, 4, 1, 16, 16}, {4, 4, 1, 19, 19},
	// Mastercard, with the 2-series
	{51, 55, 2, 16, 16}, {2221, 2720, 4, 16, 16},
	// American Express
	{34, 34, 2, 15, 15}, {37, 37, 2, 15, 15},
	// Discover
	{6011, 6011, 4, 16, 19}, {644, 649, 3, 16, 19}, {65, 65, 2, 16, 19},
	// JCB
	{3528, 3589, 4, 16, 19},
	// Diners Club
	{300, 305, 3, 14, 19}, {3095, 3095, 4, 14, 19}, {36, 36, 2, 14, 19}, {38, 39, 2, 14, 19},
	// UnionPay
	{62, 62, 2, 16, 19},
	// Mir
	{2200, 2204, 4, 16, 19},
}

func knownIssuer(digits []byte) bool {
	for _, nw := range cardNetworks {
		if len(digits) < nw.min || len(digits) > nw.max {
			continue
		}
		if p := leadingNumber(digits, nw.digits); p >= nw.low && p <= nw.high {
			return true
		}
	}
	return false
}

// leadingNumber is the number the first n digits spell.
func leadingNumber(digits []byte, n int) int {
	v := 0
	for _, d := range digits[:n] {
		v = v*10 + int(d-'0')
	}
	return v
}

// luhnValid is the Luhn (mod 10) check of ISO/IEC 7812: doubling every
// second digit from the right, the sum is a multiple of ten.
func luhnValid(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}
