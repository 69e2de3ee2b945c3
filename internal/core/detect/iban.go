// SPDX-License-Identifier: Apache-2.0

package detect

// An IBAN (ISO 13616) is a country code, two check digits and the
// country's BBAN, whose length and layout the IBAN registry fixes, with
// the whole passing the ISO 7064 mod 97-10 check. It is found in the
// electronic form (no spaces) or with single spaces anywhere after the
// check digits, as in the print form's groups of four; in upper or lower
// case.
func findIBAN(text string) (start, end int, ok bool) {
	// Digits are rarer than letters in most text: find the check digits
	// first, then look for the country code before them.
	for d := nextDigit(text, 2); d+1 < len(text); d = nextDigit(text, d+1) {
		i := d - 2
		if !letterByte[text[i]] || !letterByte[text[i+1]] || !digitByte[text[d+1]] {
			continue
		}
		layout, known := ibanLayoutOf(text[i]&^0x20, text[i+1]&^0x20)
		if !known || !startsWord(text, i) {
			continue
		}
		if end, ok := ibanAt(text, i, layout); ok {
			return i, end, true
		}
	}
	return 0, 0, false
}

// ibanAt is the end of the IBAN of the given layout starting at text[i].
func ibanAt(text string, i int, layout string) (end int, ok bool) {
	var iban [34]byte
	length := 4 + bbanLength(layout)
	n, j := 0, i
	for n < length {
		if n >= 4 && j+1 < len(text) && text[j] == ' ' && alnumByte[text[j+1]] {
			j++
		}
		if j >= len(text) || !alnumByte[text[j]] {
			return 0, false
		}
		iban[n] = upperCase(text[j])
		n++
		j++
	}
	if !endsWord(text, j) || !bbanMatches(iban[4:n], layout) || !mod97Valid(iban[:n]) {
		return 0, false
	}
	return j, true
}

func upperCase(c byte) byte {
	if lowerByte[c] {
		return c - 'a' + 'A'
	}
	return c
}

// mod97Valid is the ISO 7064 mod 97-10 check of an IBAN: moved to the
// end, the country code and check digits, with letters as 10–35, make a
// number whose remainder by 97 is 1. Folded a digit at a time, so no big
// integers.
func mod97Valid(iban []byte) bool {
	r := 0
	for k := range iban {
		c := iban[(k+4)%len(iban)]
		if digitByte[c] {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A') + 10) % 97
		}
	}
	return r == 1
}

// bbanLength is the number of characters a layout describes.
func bbanLength(layout string) int {
	n := 0
	for k := 0; k < len(layout); k += 2 {
		n += int(layout[k])
	}
	return n
}

// bbanMatches is whether a BBAN has the layout: n digits, a upper case
// letters, c letters or digits, in the registry's order.
func bbanMatches(bban []byte, layout string) bool {
	pos := 0
	for k := 0; k < len(layout); k += 2 {
		count, kind := int(layout[k]), layout[k+1]
		for _, c := range bban[pos : pos+count] {
			if (kind == 'n' && !digitByte[c]) || (kind == 'a' && !upperByte[c]) {
				return false
			}
		}
		pos += count
	}
	return true
}

func ibanLayoutOf(a, b byte) (string, bool) {
	layout := ibanLayouts[int(a-'A')*26+int(b-'A')]
	return layout, layout != ""
}

// ibanLayouts holds each country's BBAN layout, indexed by its two-letter
// code, as count-kind byte pairs (a count of 8 digits is "\x08n").
var ibanLayouts = buildIBANLayouts()

// ibanRegistry is the BBAN layout of each country in SWIFT's IBAN
// registry, in the registry's notation: 8!n eight digits, 4!a four upper
// case letters, 12!c twelve letters or digits.
var ibanRegistry = map[string]string{
	"AD": "4!n4!n12!c", "AE": "3!n16!n", "AL": "8!n16!c", "AT": "5!n11!n", "AZ": "4!a20!c",
	"BA": "3!n3!n8!n2!n", "BE": "3!n7!n2!n", "BG": "4!a4!n2!n8!c", "BH": "4!a14!c", "BI": "5!n5!n11!n2!n",
	"BR": "8!n5!n10!n1!a1!c", "BY": "4!c4!n16!c", "CH": "5!n12!c", "CR": "4!n14!n", "CY": "3!n5!n16!c",
	"CZ": "4!n6!n10!n", "DE": "8!n10!n", "DJ": "5!n5!n11!n2!n", "DK": "4!n9!n1!n", "DO": "4!c20!n",
	"EE": "2!n14!n", "EG": "4!n4!n17!n", "ES": "4!n4!n1!n1!n10!n", "FI": "3!n11!n", "FK": "2!a12!n",
	"FO": "4!n9!n1!n", "FR": "5!n5!n11!c2!n", "GB": "4!a6!n8!n", "GE": "2!a16!n", "GI": "4!a15!c",
	"GL": "4!n9!n1!n", "GR": "3!n4!n16!c", "GT": "4!c20!c", "HN": "4!a20!n", "HR": "7!n10!n",
	"HU": "3!n4!n1!n15!n1!n", "IE": "4!a6!n8!n", "IL": "3!n3!n13!n", "IQ": "4!a3!n12!n", "IS": "4!n2!n6!n10!n",
	"IT": "1!a5!n5!n12!c", "JO": "4!a4!n18!c", "KW": "4!a22!c", "KZ": "3!n13!c", "LB": "4!n20!c",
	"LC": "4!a24!c", "LI": "5!n12!c", "LT": "5!n11!n", "LU": "3!n13!c", "LV": "4!a13!c",
	"LY": "3!n3!n15!n", "MC": "5!n5!n11!c2!n", "MD": "2!c18!c", "ME": "3!n13!n2!n", "MK": "3!n10!c2!n",
	"MN": "4!n12!n", "MR": "5!n5!n11!n2!n", "MT": "4!a5!n18!c", "MU": "4!a2!n2!n12!n3!n3!a", "NI": "4!a20!n",
	"NL": "4!a10!n", "NO": "4!n6!n1!n", "OM": "3!n16!c", "PK": "4!a16!c", "PL": "8!n16!n",
	"PS": "4!a21!c", "PT": "4!n4!n11!n2!n", "QA": "4!a21!c", "RO": "4!a16!c", "RS": "3!n13!n2!n",
	"RU": "9!n5!n15!c", "SA": "2!n18!c", "SC": "4!a2!n2!n16!n3!a", "SD": "2!n12!n", "SE": "3!n16!n1!n",
	"SI": "5!n8!n2!n", "SK": "4!n6!n10!n", "SM": "1!a5!n5!n12!c", "SO": "4!n3!n12!n", "ST": "8!n11!n2!n",
	"SV": "4!a20!n", "TL": "3!n14!n2!n", "TN": "2!n3!n13!n2!n", "TR": "5!n1!n16!c", "UA": "6!n19!c",
	"VA": "3!n15!n", "VG": "4!a16!n", "XK": "4!n10!n2!n", "YE": "4!a4!n18!c",
}

// buildIBANLayouts compiles ibanRegistry into the indexed form the
// scanner reads without allocating.
func buildIBANLayouts() *[26 * 26]string {
	var layouts [26 * 26]string
	for country, notation := range ibanRegistry {
		layouts[int(country[0]-'A')*26+int(country[1]-'A')] = compileLayout(notation)
	}
	return &layouts
}

// compileLayout turns "4!a14!c" into "\x04a\x0ec".
func compileLayout(notation string) string {
	var out []byte
	count := 0
	for k := 0; k < len(notation); k++ {
		switch c := notation[k]; {
		case digitByte[c]:
			count = count*10 + int(c-'0')
		case c == '!':
		default:
			out = append(out, byte(count), c)
			count = 0
		}
	}
	return string(out)
}
