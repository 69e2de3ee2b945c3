// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math/big"
	"strings"
)

// ibanFormats are BBAN layouts from SWIFT's IBAN registry for the
// countries the positives use: n digits, a upper case letters, c letters
// or digits.
var ibanFormats = []struct{ country, bban string }{
	{"DE", "8n10n"}, {"GB", "4a6n8n"}, {"FR", "5n5n11c2n"}, {"ES", "4n4n1n1n10n"}, {"IT", "1a5n5n12c"},
	{"NL", "4a10n"}, {"BE", "3n7n2n"}, {"CH", "5n12c"}, {"AT", "5n11n"}, {"PL", "8n16n"},
	{"PT", "4n4n11n2n"}, {"IE", "4a6n8n"}, {"SE", "3n16n1n"}, {"NO", "4n6n1n"}, {"DK", "4n9n1n"},
	{"FI", "3n11n"}, {"LU", "3n13c"}, {"GR", "3n4n16c"}, {"CZ", "4n6n10n"}, {"HU", "3n4n1n15n1n"},
	{"RO", "4a16c"}, {"BG", "4a4n2n8c"}, {"HR", "7n10n"}, {"LT", "5n11n"}, {"EE", "2n14n"},
	{"MT", "4a5n18c"}, {"TR", "5n1n16c"}, {"SA", "2n18c"}, {"AE", "3n16n"}, {"BR", "8n5n10n1a1c"},
	{"MU", "4a2n2n12n3n3a"}, {"UA", "6n19c"}, {"KW", "4a22c"}, {"IL", "3n3n13n"},
}

// randomBBAN draws a BBAN of a layout.
func randomBBAN(r *rng, layout string) string {
	var b strings.Builder
	for rest := layout; rest != ""; {
		var count int
		var kind byte
		n, _ := fmt.Sscanf(rest, "%d%c", &count, &kind)
		if n != 2 {
			panic("bad layout " + layout)
		}
		rest = rest[len(fmt.Sprint(count))+1:]
		switch kind {
		case 'n':
			b.WriteString(r.chars(digits, count))
		case 'a':
			b.WriteString(r.chars(upper, count))
		default:
			b.WriteString(r.chars(upperAlnum, count))
		}
	}
	return b.String()
}

// ibanCheckDigits are the check digits of ISO 13616 for a country and
// BBAN: 98 minus the remainder by 97 of the number that the BBAN, the
// country and "00" spell with letters as 10-35.
func ibanCheckDigits(country, bban string) string {
	n, ok := new(big.Int).SetString(ibanDigits(bban+country+"00"), 10)
	if !ok {
		panic("bad IBAN " + country + bban)
	}
	return fmt.Sprintf("%02d", 98-new(big.Int).Mod(n, big.NewInt(97)).Int64())
}

func ibanDigits(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			fmt.Fprint(&b, int(c-'A')+10)
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// ibanChecks is whether an IBAN's check digits are right.
func ibanChecks(iban string) bool {
	return ibanCheckDigits(iban[:2], iban[4:]) == iban[2:4]
}

func makeIBAN(country, bban string) string {
	return country + ibanCheckDigits(country, bban) + bban
}

// printIBAN writes the print form: groups of four.
func printIBAN(iban string) string {
	var parts []string
	for len(iban) > 4 {
		parts = append(parts, iban[:4])
		iban = iban[4:]
	}
	return strings.Join(append(parts, iban), " ")
}

var ibanContexts = []string{
	`{"tool": "sepa_transfer", "args": {"iban": "{V}", "amount": "250.00", "reference": "Invoice 118"}}`,
	`Please transfer the deposit to IBAN {V} by Friday.`,
	`<CdtrAcct><Id><IBAN>{V}</IBAN></Id></CdtrAcct>`,
	`{"beneficiary": {"name": "Jane Doe", "iban": "{V}", "bic": "COBADEFFXXX"}}`,
	`{"body": "Bank details:\nIBAN: {V}\nBIC: NWBKGB2L\nThanks!"}`,
	`2024-05-01T12:00:00Z INFO payout iban={V} amount=1200.00 status=sent`,
	`https://bank.example.com/transfer?iban={V}`,
	`Kontoinhaber: Jane Doe, IBAN {V}, Verwendungszweck Miete Mai`,
	"name,iban,amount\nJane Doe,{V},250.00",
	`{"messages": [{"role": "user", "content": "my account is {V} can you check the refund"}]}`,
	`Virement sur le compte {V}.`,
	`{"input": "{\"account\": {\"iban\": \"{V}\"}}"}`,
}

func ibanCases(c *corpus) {
	r := c.r
	const registry = "BBAN layout from SWIFT's IBAN registry; random BBAN with ISO 7064 mod 97-10 check digits"
	for _, f := range ibanFormats {
		c.embedded(3, f.country+" IBAN, electronic form", registry, ibanContexts, func() string {
			return makeIBAN(f.country, randomBBAN(r, f.bban))
		})
		c.embedded(3, f.country+" IBAN, print form (groups of four)", registry, ibanContexts, func() string {
			return printIBAN(makeIBAN(f.country, randomBBAN(r, f.bban)))
		})
	}
	documented := []string{"GB82WEST12345698765432", "DE89370400440532013000", "FR1420041010050500013M02606",
		"NL91ABNA0417164300", "BE68539007547034", "CH9300762011623852957"}
	for _, iban := range documented {
		if !ibanChecks(iban) {
			panic("documented IBAN fails its check: " + iban)
		}
		c.embedded(1, "a registry's published example IBAN", "SWIFT IBAN registry examples", ibanContexts, func() string { return iban })
		c.embedded(1, "a registry's published example IBAN, print form", "SWIFT IBAN registry examples", ibanContexts, func() string { return printIBAN(iban) })
	}
	c.embedded(6, "IBAN in lower case", "real-world shape: an IBAN typed in lower case", ibanContexts, func() string {
		f := ibanFormats[r.intn(len(ibanFormats))]
		return strings.ToLower(makeIBAN(f.country, randomBBAN(r, f.bban)))
	})
	c.embedded(4, "IBAN grouped irregularly", "real-world shape: the bank code and account number written apart",
		[]string{`IBAN: {V}`, `{"iban": "{V}"}`}, func() string {
			iban := makeIBAN("DE", randomBBAN(r, "8n10n"))
			return iban[:4] + " " + iban[4:12] + " " + iban[12:]
		})
	c.embedded(2, "IBAN with the country code spaced from the check digits", "real-world shape: hand-typed",
		[]string{`IBAN: {V}`}, func() string {
			iban := makeIBAN("GB", randomBBAN(r, "4a6n8n"))
			return iban[:2] + " " + printIBAN(iban[2:])
		})
	ibanNegatives(c)
}

func ibanNegatives(c *corpus) {
	r := c.r
	random := func() (string, string) {
		f := ibanFormats[r.intn(len(ibanFormats))]
		return f.country, randomBBAN(r, f.bban)
	}
	// Each negative generator draws until its string is not a valid IBAN:
	// a random string that passes every check is one.
	invalid := func(make func() string) func() string {
		return func() string {
			for {
				s := make()
				compact := strings.ToUpper(strings.ReplaceAll(s, " ", ""))
				if len(compact) < 5 || !validIBAN(compact) {
					return s
				}
			}
		}
	}
	maybePrinted := func(s string) string {
		if r.intn(2) == 0 {
			return printIBAN(s)
		}
		return s
	}
	c.embeddedNegatives(45, "IBAN with one character changed", "wrong checksum: a valid IBAN with a digit or letter replaced", ibanContexts, invalid(func() string {
		iban := makeIBAN(random())
		k := r.between(2, len(iban)-1)
		alphabet := digits
		if iban[k] >= 'A' {
			alphabet = upper
		}
		return maybePrinted(iban[:k] + r.chars(alphabet, 1) + iban[k+1:])
	}))
	c.embeddedNegatives(15, "IBAN with two adjacent characters swapped", "wrong checksum: a transposition", ibanContexts, invalid(func() string {
		iban := makeIBAN(random())
		k := r.between(4, len(iban)-2)
		return maybePrinted(iban[:k] + iban[k+1:k+2] + iban[k:k+1] + iban[k+2:])
	}))
	c.embeddedNegatives(25, "right checksum, wrong length for the country", "wrong length: a BBAN one or two characters short or long, check digits computed for it", ibanContexts, func() string {
		country, bban := random()
		switch r.intn(3) {
		case 0:
			bban = bban[:len(bban)-1]
		case 1:
			bban += r.chars(digits, 1)
		default:
			bban = bban[:len(bban)-2]
		}
		return maybePrinted(makeIBAN(country, bban))
	})
	c.embeddedNegatives(10, "right checksum and length, BBAN layout wrong", "layout: letters where the registry has digits (DE, AT, PL: all digits)", ibanContexts, func() string {
		country := r.pick("DE", "AT", "PL")
		bban := randomBBAN(r, map[string]string{"DE": "8n10n", "AT": "5n11n", "PL": "8n16n"}[country])
		k := r.intn(len(bban) - 2)
		return maybePrinted(makeIBAN(country, bban[:k]+r.chars(upper, 2)+bban[k+2:]))
	})
	c.embeddedNegatives(15, "right checksum, no such IBAN country", "country: codes without an IBAN (US, CA, CN, IN, JP, AU) or none (XX)", ibanContexts, func() string {
		return maybePrinted(makeIBAN(r.pick("US", "CA", "CN", "IN", "JP", "AU", "XX"), r.chars(digits, r.between(14, 24))))
	})
	c.embeddedNegatives(30, "random upper-case alphanumeric string with an IBAN-like start", "real-world shape: references, licence keys and IDs starting with two letters and two digits",
		[]string{`{"reference": "{V}"}`, `licence key {V}`, `ref={V} status=ok`, `{"id": "{V}", "type": "batch"}`},
		invalid(func() string {
			country, bban := random()
			return country + r.chars(digits, 2) + r.chars(upperAlnum, len(bban))
		}))
	c.embeddedNegatives(10, "BIC / SWIFT code", "real-world shape: BIC (ISO 9362)",
		[]string{`{"bic": "{V}"}`, `SWIFT: {V}`}, func() string {
			return r.pick("DEUTDEFF", "COBADEFFXXX", "NWBKGB2L", "BNPAFRPPXXX", "INGBNL2A", "UBSWCHZH80A", "DEUTDEFF500")
		})
	c.embeddedNegatives(10, "VAT identification number", "real-world shape: EU VAT IDs (country code and 8-12 characters)",
		[]string{`{"vat_id": "{V}", "company": "Example GmbH"}`, `USt-IdNr.: {V}`}, func() string {
			return r.pick("DE", "GB", "FR", "NL", "IT") + r.chars(digits, r.between(9, 11))
		})
	c.embeddedNegatives(8, "ISIN", "real-world shape: ISIN (ISO 6166)",
		[]string{`{"isin": "{V}", "qty": 10}`, `Bought 10 x {V}`}, func() string {
			return r.pick("US0378331005", "DE0005140008", "GB0002634946", "FR0000120271", "NL0010273215")
		})
	c.embeddedNegatives(8, "VIN or postal tracking number", "real-world shape: other upper-case identifiers",
		[]string{`{"id": "{V}"}`, `identifier {V} found`}, func() string {
			return r.pick("1HGCM82633A004352", "WVWZZZ1JZXW000001", "RR"+r.chars(digits, 9)+"DE", "LZ"+r.chars(digits, 9)+"CN")
		})
	c.embeddedNegatives(4, "AWS access key ID", "real-world shape: an upper-case key of IBAN-like length",
		[]string{`{"id": "{V}"}`}, func() string { return "AKIA" + r.chars(base32, 16) }, "api_key")
	c.embeddedNegatives(6, "valid IBAN inside a longer alphanumeric run", "boundary: the run is one token, not an IBAN",
		[]string{`{"token": "{V}"}`, `blob={V}`}, func() string {
			return r.pick(r.chars(upperAlnum, 3), "") + makeIBAN(random()) + r.chars(upperAlnum, r.between(1, 4))
		})
	c.embeddedNegatives(10, "masked IBAN", "real-world shape: masked display forms",
		[]string{`{"iban": "{V}"}`, `Refund sent to {V}.`}, func() string {
			iban := makeIBAN(random())
			return r.pick(iban[:4]+" **** **** "+iban[len(iban)-4:], iban[:4]+strings.Repeat("X", len(iban)-8)+iban[len(iban)-4:])
		})
	c.embeddedNegatives(6, "UK sort code and account number", "real-world shape: domestic bank details",
		[]string{`Sort code {V}`}, func() string {
			return r.chars(digits, 2) + "-" + r.chars(digits, 2) + "-" + r.chars(digits, 2) + ", account " + r.chars(digits, 8)
		})
}

// validIBAN is whether s passes every check: a registry country, its
// length and layout, and the check digits.
func validIBAN(s string) bool {
	if len(s) < 5 {
		return false
	}
	for _, f := range ibanFormats {
		if f.country == s[:2] {
			return len(s) == 4+layoutLength(f.bban) && layoutMatches(s[4:], f.bban) && ibanChecks(s)
		}
	}
	return false // a country outside ibanFormats: the generator does not draw its layout
}

func layoutLength(layout string) int {
	n := 0
	for rest := layout; rest != ""; {
		var count int
		var kind byte
		fmt.Sscanf(rest, "%d%c", &count, &kind)
		rest = rest[len(fmt.Sprint(count))+1:]
		n += count
	}
	return n
}

func layoutMatches(bban, layout string) bool {
	for rest := layout; rest != ""; {
		var count int
		var kind byte
		fmt.Sscanf(rest, "%d%c", &count, &kind)
		rest = rest[len(fmt.Sprint(count))+1:]
		for _, c := range bban[:count] {
			if (kind == 'n' && (c < '0' || c > '9')) || (kind == 'a' && (c < 'A' || c > 'Z')) {
				return false
			}
		}
		bban = bban[count:]
	}
	return true
}
