// SPDX-License-Identifier: Apache-2.0

package detect

// The byte classes the finders scan with. Tables rather than range tests
// because the scanners run over every byte of every argument and result.
var (
	digitByte     = byteClass("0123456789")
	upperByte     = byteClass("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	lowerByte     = byteClass("abcdefghijklmnopqrstuvwxyz")
	letterByte    = byteClass("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
	hexByte       = byteClass("0123456789abcdefABCDEF")
	alnumByte     = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
	upperAlnum    = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	base64URLByte = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_")
	identByte     = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
)

type byteSet [256]bool

func byteClass(members string) byteSet {
	var s byteSet
	for i := 0; i < len(members); i++ {
		s[members[i]] = true
	}
	return s
}

// runEnd is the end of the run of class bytes starting at i.
func runEnd(text string, i int, class *byteSet) int {
	for i < len(text) && class[text[i]] {
		i++
	}
	return i
}

// runEndMax is runEnd looking at most most+1 bytes: a result more than
// most past i means the run is longer than most. The finders bound every
// scan that a trigger starts, so that text repeating a trigger ("sk-sk-
// sk-…") costs a bounded amount per trigger, never the rest of the text.
func runEndMax(text string, i int, class *byteSet, most int) int {
	limit := min(len(text), i+most+1)
	for i < limit && class[text[i]] {
		i++
	}
	return i
}

// runStartMax is the start of the run of class bytes ending just before
// i, looking back at most most+1 bytes.
func runStartMax(text string, i int, class *byteSet, most int) int {
	limit := max(0, i-most-1)
	for i > limit && class[text[i-1]] {
		i--
	}
	return i
}

// startsWord is whether a value may begin at text[i]: at the start of the
// text or after a byte that cannot be part of the same word. Tool arguments
// are often JSON or URL text seen raw, so an escape ending just before i
// (\n, \t, \u0022, %20) also separates words: in `"a\nsk-…"` the n belongs
// to the escape, not to the key.
func startsWord(text string, i int) bool {
	if i == 0 || !alnumByte[text[i-1]] {
		return true
	}
	return escapeEndsAt(text, i)
}

// endsWord is whether a value may end just before text[j].
func endsWord(text string, j int) bool {
	return j >= len(text) || !alnumByte[text[j]]
}

// escapeEndsAt is whether a JSON escape (\n \r \t \b \f \uXXXX) or a URL
// percent escape (%XX) ends just before text[i].
func escapeEndsAt(text string, i int) bool {
	switch {
	case i >= 2 && isEscapeLetter(text[i-1]) && oddBackslashesBefore(text, i-1):
		return true
	case i >= 6 && text[i-5] == 'u' && isHex4(text[i-4:i]) && oddBackslashesBefore(text, i-5):
		return true
	case i >= 3 && text[i-3] == '%' && hexByte[text[i-2]] && hexByte[text[i-1]]:
		return true
	}
	return false
}

func isEscapeLetter(c byte) bool {
	return c == 'n' || c == 'r' || c == 't' || c == 'b' || c == 'f'
}

func isHex4(s string) bool {
	return hexByte[s[0]] && hexByte[s[1]] && hexByte[s[2]] && hexByte[s[3]]
}

// oddBackslashesBefore is whether text[i] is escaped: preceded by an odd
// number of backslashes (an even number is escaped backslashes).
func oddBackslashesBefore(text string, i int) bool {
	n := 0
	for i-n-1 >= 0 && text[i-n-1] == '\\' {
		n++
	}
	return n%2 == 1
}

// escapeLenAt is the length of a JSON or percent escape starting at
// text[i] that the previous byte's backslash begins (n for \n, 5 for
// \u0022) or a %XX escape (3), or 0 when none starts there. The local part
// of an address scanned backwards must drop it: `\u003cjane@…` is <jane@…>.
func escapeLenAt(text string, i int) int {
	switch {
	case i >= 1 && i < len(text) && oddBackslashesBefore(text, i) && isEscapeLetter(text[i]):
		return 1
	case i >= 1 && i+5 <= len(text) && oddBackslashesBefore(text, i) && text[i] == 'u' && isHex4(text[i+1:i+5]):
		return 5
	case i+3 <= len(text) && text[i] == '%' && hexByte[text[i+1]] && hexByte[text[i+2]]:
		return 3
	}
	return 0
}

// variety summarises a token's characters: whether it has digits, upper
// and lower case letters, and how many distinct bytes. Real keys are
// random; placeholders (xxxx…, YOUR_KEY_HERE) are not.
type variety struct {
	digit, upper, lower, nonHex bool
	distinct                    int
}

func varietyOf(s string) variety {
	var v variety
	var seen [4]uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		v.digit = v.digit || digitByte[c]
		v.upper = v.upper || upperByte[c]
		v.lower = v.lower || lowerByte[c]
		v.nonHex = v.nonHex || (!hexByte[c] && alnumByte[c])
		if seen[c>>6]&(1<<(c&63)) == 0 {
			seen[c>>6] |= 1 << (c & 63)
			v.distinct++
		}
	}
	return v
}

// random is the test every key family shares: letters and digits, or
// both cases (a random 20-character body lacks a digit one time in 30),
// and enough distinct characters that it is not a placeholder
// (xxxx…, your_token_here).
func (v variety) random() bool {
	return v.distinct >= 8 && ((v.digit && (v.upper || v.lower)) || (v.upper && v.lower))
}

// nextDigit is the index of the first digit at or after i, or len(text).
func nextDigit(text string, i int) int {
	for i < len(text) && !digitByte[text[i]] {
		i++
	}
	return i
}
