// SPDX-License-Identifier: Apache-2.0

package detect

// A phone number is one of:
//   - international: + (or 00 and a separator-grouped number), a country
//     code and a national number whose length fits the country, written
//     unbroken (at least ten digits) or in groups separated by spaces,
//     dashes, dots or a parenthesised area code, the "(0)" of a trunk
//     prefix allowed: +14155552671, +44 (0)20 7946 0958, +81 3-1234-5678;
//   - North American: a 3-3-4 number whose area code starts with 2–9,
//     separated, optionally after a 1: (555) 123-4567, 1-800-555-0199;
//   - national with a trunk 0: ten to twelve digits in groups separated
//     by one kind of separator: 020 7946 0958, 06 12 34 56 78, (02) 9374 4000.
//
// Digits without any separator and without a + are not looked at: an
// order number, timestamp or card number is an unbroken digit run, and so
// would be a bare national number, which is left out on purpose. Dates,
// times, IP addresses and versions have the wrong grouping or separators.
func findPhone(text string) (start, end int, ok bool) {
	for i := 0; i < len(text); {
		c := text[i]
		next := i + 1
		switch {
		case c == '+' || c == '(':
			if startsWord(text, i) {
				if end, ok := phoneAt(text, i); ok {
					return i, end, true
				}
			}
		case digitByte[c]:
			// Without a +, a number has groups: an unbroken run is skipped
			// before any parsing, the common case in a miss.
			next = runEnd(text, i, &digitByte)
			if next < len(text) && isPhoneSeparator(text[next]) && startsNumber(text, i) {
				if end, ok := phoneAt(text, i); ok {
					return i, end, true
				}
			}
		}
		i = next
	}
	return 0, 0, false
}

// phoneChain is a run of digit groups as phone numbers are written.
type phoneChain struct {
	plus   bool
	groups [8]phoneGroup
	n      int
	end    int
}

type phoneGroup struct {
	digits string // without parentheses
	paren  bool
	sep    byte // the separator before the group: ' ', '-', '.', or 0 after a ')'
}

// phoneAt is the end of the phone number starting at text[i].
func phoneAt(text string, i int) (end int, ok bool) {
	var c phoneChain
	if !c.read(text, i) {
		return 0, false
	}
	var valid bool
	switch {
	case c.plus:
		valid = c.trimTo(15) && c.international(0)
	case len(c.groups[0].digits) >= 2 && c.groups[0].digits[:2] == "00" && !c.groups[0].paren:
		valid = c.n >= 3 && c.trimTo(17) && c.international(2)
	case c.groups[0].digits[0] == '0':
		valid = c.trunkNational()
	default:
		valid = c.northAmerican()
	}
	if !valid || continuesPhone(text, c.end) {
		return 0, false
	}
	return c.end, true
}

// read parses the groups starting at text[i]: an optional +, then groups
// of digits, a group in parentheses, each after one separator.
func (c *phoneChain) read(text string, i int) bool {
	j := i
	if text[j] == '+' {
		c.plus = true
		j++
	}
	var sep byte
	for c.n < len(c.groups) {
		g, k, ok := phoneGroupAt(text, j)
		if !ok {
			break
		}
		g.sep = sep
		c.groups[c.n] = g
		c.n++
		c.end = k
		sep, j, ok = phoneSeparator(text, k, g.paren)
		if !ok {
			break
		}
	}
	return c.n > 0 && !(c.plus && c.groups[0].paren)
}

// phoneGroupAt reads digits or (digits) at text[j].
func phoneGroupAt(text string, j int) (g phoneGroup, end int, ok bool) {
	if j >= len(text) {
		return g, 0, false
	}
	if text[j] == '(' {
		k := runEnd(text, j+1, &digitByte)
		if k == j+1 || k-j-1 > 5 || k >= len(text) || text[k] != ')' {
			return g, 0, false
		}
		return phoneGroup{digits: text[j+1 : k], paren: true}, k + 1, true
	}
	k := runEnd(text, j, &digitByte)
	if k == j {
		return g, 0, false
	}
	return phoneGroup{digits: text[j:k]}, k, true
}

func isPhoneSeparator(c byte) bool { return c == ' ' || c == '-' || c == '.' }

// phoneSeparator reads the separator after a group ending at text[k] and
// before another: one space, dash or dot, or nothing after a ')'.
func phoneSeparator(text string, k int, afterParen bool) (sep byte, next int, ok bool) {
	startsGroup := func(j int) bool { return j < len(text) && (digitByte[text[j]] || text[j] == '(') }
	if k < len(text) && isPhoneSeparator(text[k]) && startsGroup(k+1) {
		return text[k], k + 1, true
	}
	if afterParen && k < len(text) && digitByte[text[k]] {
		return 0, k, true
	}
	return 0, 0, false
}

// digitCount counts the number's digits, leaving out an international
// number's "(0)": the trunk prefix is not dialled from abroad.
func (c *phoneChain) digitCount() int {
	n := 0
	for _, g := range c.groups[:c.n] {
		if !(c.plus && g.paren && g.digits == "0") {
			n += len(g.digits)
		}
	}
	return n
}

// trimTo drops trailing space-separated groups until an international
// number has at most max digits: in "+44 20 7946 0958 1234" the last
// group is another number. A group after a dash or dot belongs to the
// number: then it is too long. National numbers are not trimmed: without
// a country code to anchor them, "0479 5584 3430 1536" is one long
// number, not a phone number and a group.
func (c *phoneChain) trimTo(max int) bool {
	for c.digitCount() > max {
		last := c.groups[c.n-1]
		if c.n == 1 || last.sep != ' ' {
			return false
		}
		c.n--
		c.end -= len(last.digits) + 1
	}
	return true
}

// digits copies the number's digits into buf, the trunk "(0)" left out.
func (c *phoneChain) digits(buf *[24]byte) []byte {
	n := 0
	for _, g := range c.groups[:c.n] {
		if !(c.plus && g.paren && g.digits == "0") {
			n += copy(buf[n:], g.digits)
		}
	}
	return buf[:n]
}

// separators summarises the separators: how many, and whether a dot is
// among them.
func (c *phoneChain) separators() (count int, dot, mixed bool) {
	var first byte
	for _, g := range c.groups[1:c.n] {
		if g.sep == 0 {
			continue
		}
		count++
		dot = dot || g.sep == '.'
		if first == 0 {
			first = g.sep
		}
		mixed = mixed || g.sep != first
	}
	return count, dot, mixed
}

// international checks a number after + (skip 0) or 00 (skip 2): a
// country code and a national number of the country's length.
func (c *phoneChain) international(skip int) bool {
	var buf [24]byte
	all := c.digits(&buf)
	digits := all[skip:]
	if len(digits) < 8 || len(digits) > 15 || digits[0] == '0' {
		return false
	}
	seps, dot, _ := c.separators()
	if (seps == 0 && len(digits) < 10) || (dot && seps < 2) {
		return false
	}
	cc := countryCodeLength(digits)
	national := digits[cc:]
	if skip == 0 && c.n > 1 && len(c.groups[0].digits) < cc {
		return false
	}
	low, high := nationalLength(string(digits[:cc]))
	if len(national) < low || len(national) > high {
		return false
	}
	if cc == 1 && digits[0] == '1' {
		return national[0] >= '2' // a North American area code
	}
	return true
}

// northAmerican checks a 3-3-4 number, optionally after a 1 group.
func (c *phoneChain) northAmerican() bool {
	groups := c.groups[:c.n]
	if len(groups) == 4 && groups[0].digits == "1" && !groups[0].paren {
		groups = groups[1:]
	}
	if len(groups) != 3 || len(groups[0].digits) != 3 || len(groups[1].digits) != 3 || len(groups[2].digits) != 4 {
		return false
	}
	if groups[1].paren || groups[2].paren || groups[2].sep == 0 {
		return false
	}
	if !groups[0].paren && groups[1].sep == 0 {
		return false
	}
	return groups[0].digits[0] >= '2'
}

// trunkNational checks a national number that starts with the trunk
// prefix 0: ten to twelve digits, groups of two to eight (a German
// subscriber number has eight) after a first of two to five, one kind of
// separator (after a parenthesised first group, a space or nothing).
func (c *phoneChain) trunkNational() bool {
	first := c.groups[0].digits
	if c.n < 2 || c.digitCount() < 10 || c.digitCount() > 12 || len(first) < 2 || len(first) > 5 || first[1] == '0' {
		return false
	}
	for _, g := range c.groups[1:c.n] {
		if g.paren || len(g.digits) < 2 || len(g.digits) > 8 {
			return false
		}
	}
	seps, dot, mixed := c.separators()
	if c.groups[0].paren && c.n > 1 {
		// "(02) 9374 4000": the separator after ")" is not counted.
		mixed = mixed && !(c.groups[1].sep == ' ' || c.groups[1].sep == 0)
	}
	return !mixed && !(dot && seps < 2)
}

// continuesPhone is whether the text goes on from a number's end in a way
// that makes it part of something longer: a letter or digit, a decimal
// (.5 ,5), or another group after a dash or dot.
func continuesPhone(text string, end int) bool {
	if end >= len(text) {
		return false
	}
	if alnumByte[text[end]] {
		return true
	}
	if end+1 < len(text) && digitByte[text[end+1]] {
		switch text[end] {
		case '.', ',', '-', '/':
			return true
		}
	}
	return false
}

// countryCodeLength is the length of the E.164 country code that starts
// digits: the codes form a prefix code, so the first digits decide.
func countryCodeLength(digits []byte) int {
	if digits[0] == '1' || digits[0] == '7' {
		return 1
	}
	if twoDigitCountryCodes[int(digits[0]-'0')*10+int(digits[1]-'0')] {
		return 2
	}
	return 3
}

// twoDigitCountryCodes are ITU-T E.164's two-digit country codes.
var twoDigitCountryCodes = func() (set [100]bool) {
	for _, cc := range []int{20, 27, 30, 31, 32, 33, 34, 36, 39, 40, 41, 43, 44, 45, 46, 47, 48, 49,
		51, 52, 53, 54, 55, 56, 57, 58, 60, 61, 62, 63, 64, 65, 66, 81, 82, 84, 86, 90, 91, 92, 93, 94, 95, 98} {
		set[cc] = true
	}
	return set
}()

// nationalLength is the range of national significant number lengths in
// a country, from its numbering plan, for the countries common in the
// corpus and in traffic; other countries get E.164's bounds.
func nationalLength(cc string) (low, high int) {
	switch cc {
	case "1", "7", "30", "52", "57", "58", "90", "91", "98":
		return 10, 10
	case "27", "31", "33", "34", "40", "41", "48", "56", "61", "93", "94":
		return 9, 9
	case "45", "47", "53", "65":
		return 8, 8
	case "32", "36", "51", "66":
		return 8, 9
	case "44":
		return 9, 10
	case "20", "60", "63", "64", "82", "95":
		return 8, 10
	case "81", "84", "92":
		return 9, 10
	case "54", "55", "86":
		return 10, 11
	case "39":
		return 6, 11
	case "62":
		return 8, 12
	case "43", "46", "49":
		return 6, 13
	}
	return 4, 15 - len(cc)
}
