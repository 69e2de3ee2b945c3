// SPDX-License-Identifier: Apache-2.0

package detect

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// finds checks that detector name reports want in text ("" for nothing).
func finds(t *testing.T, name string, cases map[string]string) {
	t.Helper()
	d, ok := Lookup(name)
	if !ok {
		t.Fatalf("Lookup(%q) failed", name)
	}
	for text, want := range cases {
		got, by, found := d.Find(text)
		switch {
		case want == "" && found:
			t.Errorf("%s.Find(%q) = %q, want nothing", name, text, got)
		case want != "" && (!found || got != want):
			t.Errorf("%s.Find(%q) = %q, %v; want %q", name, text, got, found, want)
		case found && by != name:
			t.Errorf("%s.Find(%q) reported detector %q", name, text, by)
		}
	}
}

func TestAPIKey(t *testing.T) {
	openAI := "sk-FAKEq8Wm2LxP0vZr7T3BlbkFJt5Yh3Nc9QaE1uKd6SbG"
	finds(t, "api_key", map[string]string{
		`{"api_key": "` + openAI + `"}`:                                                openAI,
		"OPENAI_API_KEY=sk-proj-EXAMPLE_k3J9-xQ2mZ7vB4nR8tL1wP6yH0cF5dS":               "sk-proj-EXAMPLE_k3J9-xQ2mZ7vB4nR8tL1wP6yH0cF5dS",
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n":                                   "AKIAIOSFODNN7EXAMPLE",
		"token ghp_FAKEa1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6 ok":                            "ghp_FAKEa1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6",
		"https://maps.example.com/geo?q=x&key=AIzaFAKE_k3J9xQ2mZ7vB4nR8tL1wP6yH0cF5dS": "AIzaFAKE_k3J9xQ2mZ7vB4nR8tL1wP6yH0cF5dS",
		"glpat-EXAMPLEWelzVJ_XDTEac.":                                                  "glpat-EXAMPLEWelzVJ_XDTEac",
		"Authorization: Bearer 7f9a2c1e4b8d3f6a0e5c9b2d7a1f4e8c.":                      "7f9a2c1e4b8d3f6a0e5c9b2d7a1f4e8c",
		"xoxb-12345678901-1234567890123-FAKEkL8mN2pQ4rS6tU8vW0xY":                      "xoxb-12345678901-1234567890123-FAKEkL8mN2pQ4rS6tU8vW0xY",
		"sk_test_FAKE4eC39HqLyjWDarjtT1zdp7dc":                                         "sk_test_FAKE4eC39HqLyjWDarjtT1zdp7dc",
		// A JSON escape ends a word: the n of \n is not the key's.
		`{"script": "x\nsk-FAKEq8Wm2LxP0vZr7T3BlbkFJt5Yh3Nc9QaE1uKd6SbG\n"}`:    openAI,
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJlLWZha2UtMTIzNDU2": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJlLWZha2UtMTIzNDU2",
		// Not keys.
		"pip install scikit-learn sk-learn":                 "",
		"task-" + openAI[3:]:                                "",
		"sk-" + strings.Repeat("x", 48):                     "",
		"AKIAXXXXXXXXXXXXXXXX":                              "",
		"AKIAIOSFODNN7EXAMPLEX":                             "",
		"pk_live_FAKE4eC39HqLyjWDarjtT1zdp7dc":              "",
		"Authorization: Bearer <token>":                     "",
		"Authorization: Bearer YOUR_ACCESS_TOKEN_GOES_HERE": "",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0":          "",
		"9b2e4c8a-1f3d-4e6b-a7c9-0d2f4b6e8a1c":              "",
		"da39a3ee5e6b4b0d3255bfef95601890afd80709":          "",
	})
}

func TestPrivateKey(t *testing.T) {
	body := "MIIEpAIBAAKCAQEAFAKEKEYFORTESTSONLYq8Wm2LxP0vZr7Yh3Nc9QaE1uKd6SbG\nk3J9xQ2mZ7vB4nR8tL1wP6yH0cF5dS=="
	block := "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----"
	escaped := strings.ReplaceAll(block, "\n", `\n`)
	finds(t, "private_key", map[string]string{
		"$ cat id_rsa\n" + block + "\n$":                                             block,
		`{"content": "` + escaped + `\n"}`:                                           escaped,
		"cut: -----BEGIN PRIVATE KEY-----\n" + body + "\n[…]":                        "-----BEGIN PRIVATE KEY-----\n" + body,
		strings.ReplaceAll(block, "RSA PRIVATE", "PUBLIC"):                           "",
		strings.ReplaceAll(block, "RSA PRIVATE KEY", "CERTIFICATE"):                  "",
		"-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END RSA PRIVATE KEY-----": "",
		`if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") {`:               "",
		// base64 of a PEM private key, as in a Kubernetes Secret.
		"tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2Z0lCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDRkFLRUtFWUZPUlRFU1RTT05MWQotLS0tLUVORCBQUklWQVRFIEtFWS0tLS0tCg==\n": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2Z0lCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDRkFLRUtFWUZPUlRFU1RTT05MWQotLS0tLUVORCBQUklWQVRFIEtFWS0tLS0tCg==",
		"tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUV2Z0lCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDRkFLRUtFWUZPUlRFU1RTT05MWQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==\n": "",
	})
}

func TestEmail(t *testing.T) {
	finds(t, "email", map[string]string{
		`{"to": ["jane.doe+receipts@mail.example.co.uk"]}`:            "jane.doe+receipts@mail.example.co.uk",
		"Contact: JANE@EXAMPLE.COM.":                                  "JANE@EXAMPLE.COM",
		`{"html": "\u003cjane@example.org\u003e"}`:                    "jane@example.org",
		`{"body": "Thanks,\njane@example.org\nSales"}`:                "jane@example.org",
		"https://app.example.com/invite?email=jane%40example.com&x=1": "jane%40example.com",
		"user = User(email='o'brien@example.com')":                    "o'brien@example.com",
		"mailto:kenji@123.example.cn":                                 "kenji@123.example.cn",
		// Not addresses.
		"root@localhost":                            "",
		"a@b":                                       "",
		"ping @jane.doe about it":                   "",
		"npm install @google/adk@1.2.0":             "",
		"git clone git@github.com:org/repo.git":     "",
		"postgres://app:s3cret@db.example.com:5432": "",
		"ssh://git@git.example.com/org/repo.git":    "",
		`<img src="logo@2x.png">`:                   "",
		"y = a@b.mean(axis=0)":                      "",
		"jane..doe@example.com":                     "",
		"jane@example.c":                            "",
		"deploy@web-1.prod.example.com:~$ ls":       "",
		"nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31": "",
	})
}

func TestPhoneNumber(t *testing.T) {
	finds(t, "phone_number", map[string]string{
		"Call me at +1 415 555 2671.":          "+1 415 555 2671",
		`{"to": "+14155552671"}`:               "+14155552671",
		"Tel: +44 (0)20 7946 0958":             "+44 (0)20 7946 0958",
		"+81 3-1234-5678":                      "+81 3-1234-5678",
		"office (555) 123-4567 ext. 12":        "(555) 123-4567",
		"1-800-555-0199":                       "1-800-555-0199",
		"020 7946 0958":                        "020 7946 0958",
		"06.12.34.56.78":                       "06.12.34.56.78",
		"(02) 9374 4000":                       "(02) 9374 4000",
		"tel:+33612345678":                     "+33612345678",
		"0044 20 7946 0958":                    "0044 20 7946 0958",
		"+44 20 7946 0958 1234":                "+44 20 7946 0958",
		`{"body": "Hi\n+49 30 12345678\nbye"}`: "+49 30 12345678",
		// Not phone numbers.
		"2024-01-15":                "",
		"15/01/2024 12:30:45":       "",
		"192.168.1.10":              "",
		"v10.4.12":                  "",
		"order 4155552671":          "",
		"4111 1111 1111 1111":       "",
		"1700000000123":             "",
		"+40.689247,-74.044502":     "",
		"978-3-16-148410-0":         "",
		"94105-1234":                "",
		"(123) 456-7890":            "",
		"+1 555 0100":               "",
		"+12 345 678,90 EUR":        "",
		"2024-01-15T10:30:00+05:30": "",
		"0479 5584 3430 1536":       "",
		"555-123-4567-89":           "",
		"1.0.0+20130313144700":      "",
	})
}

func TestCardNumber(t *testing.T) {
	finds(t, "card_number", map[string]string{
		"card 4111111111111111 exp 12/27":         "4111111111111111",
		"4111 1111 1111 1111":                     "4111 1111 1111 1111",
		"5555-5555-5555-4444.":                    "5555-5555-5555-4444",
		"Amex 3782 822463 10005":                  "3782 822463 10005",
		"Diners 3622 720627 1667":                 "3622 720627 1667",
		`{"pan": 2223003122003222}`:               "2223003122003222",
		"4000 0566 5566 5556 123 12/27":           "4000 0566 5566 5556",
		"id,card\nA-1042,6011111111111117,12.00":  "6011111111111117",
		`{"note": "card:\n4242424242424242"}`:     "4242424242424242",
		"GET /pay?card=4242424242424242&exp=1227": "4242424242424242",
		// Not card numbers.
		"4111111111111112":              "", // Luhn fails
		"7000000000000000009":           "", // no network's prefix... (Luhn-valid or not)
		"1700000000123":                 "", // timestamp in ms
		"1715000000000000000":           "", // timestamp in ns
		"990000862471854":               "", // IMEI, 15 digits
		"411111111111":                  "", // 12 digits
		"0.4111111111111111":            "",
		"+14111111111111111":            "",
		"4111 **** **** 1111":           "",
		"4111 1111 1111 1111 2222 3333": "",
	})
}

// A valid card number inside a longer digit run is not found: the run is
// one number.
func TestCardNumberBoundaries(t *testing.T) {
	const card = "4111111111111111"
	finds(t, "card_number", map[string]string{
		"12" + card:                "",
		card + "9":                 "",
		"ref" + card:               "",
		card + "x":                 "",
		"2024-" + card:             "",
		card + "-12":               "",
		"1234 4111 1111 1111 1111": "",
		"(" + card + ")":           card,
		"#" + card:                 card,
	})
}

func TestIBAN(t *testing.T) {
	finds(t, "iban", map[string]string{
		"IBAN: GB82 WEST 1234 5698 7654 32.":            "GB82 WEST 1234 5698 7654 32",
		"<IBAN>DE89370400440532013000</IBAN>":           "DE89370400440532013000",
		"compte fr1420041010050500013m02606":            "fr1420041010050500013m02606",
		"IBAN DE89 37040044 0532013000 BIC COBADEFFXXX": "DE89 37040044 0532013000",
		`{"iban": "NL91ABNA0417164300"}`:                "NL91ABNA0417164300",
		// Not IBANs.
		"GB82 WEST 1234 5698 7654 33": "", // checksum
		"DE8937040044053201300":       "", // a digit short
		"DE89370400440532013000X":     "", // inside a longer run
		"XDE89370400440532013000":     "",
		"US64SVBKUS6S3300958879":      "", // no IBAN in the US
		"DEUTDEFF500":                 "",
		"DE123456789":                 "",
	})
}

func TestLuhn(t *testing.T) {
	for number, want := range map[string]bool{
		"79927398713": true, "79927398710": false, "4111111111111111": true, "4111111111111112": false,
		"378282246310005": true, "0": true, "18": true, "10": false,
	} {
		if got := luhnValid([]byte(number)); got != want {
			t.Errorf("luhnValid(%s) = %v, want %v", number, got, want)
		}
	}
}

func TestMod97(t *testing.T) {
	for iban, want := range map[string]bool{
		"GB82WEST12345698765432": true, "GB82WEST12345698765433": false, "DE89370400440532013000": true,
		"DE98370400440532013000": false, "FR1420041010050500013M02606": true, "NL91ABNA0417164300": true,
		"BE68539007547034": true, "CH9300762011623852957": true, "NO9386011117947": true,
	} {
		if got := mod97Valid([]byte(iban)); got != want {
			t.Errorf("mod97Valid(%s) = %v, want %v", iban, got, want)
		}
	}
}

// Every IBAN registry entry compiles to a layout of the registered length.
func TestIBANRegistryLengths(t *testing.T) {
	lengths := map[string]int{"NO": 15, "BE": 16, "DE": 22, "GB": 22, "FR": 27, "MT": 31, "RU": 33, "LC": 32}
	for country, want := range lengths {
		layout, ok := ibanLayoutOf(country[0], country[1])
		if !ok || 4+bbanLength(layout) != want {
			t.Errorf("%s: length %d, want %d", country, 4+bbanLength(layout), want)
		}
	}
	if _, ok := ibanLayoutOf('U', 'S'); ok {
		t.Error("US has an IBAN layout")
	}
}

// "any" runs every detector in Names order: the first to find wins.
func TestLookupAny(t *testing.T) {
	d, ok := Lookup(Any)
	if !ok || d.Name() != Any {
		t.Fatalf("Lookup(any) = %v, %v", d, ok)
	}
	text := "mail jane@example.com, card 4111 1111 1111 1111"
	if v, by, ok := d.Find(text); !ok || by != "card_number" || v != "4111 1111 1111 1111" {
		t.Errorf("any.Find = %q, %q, %v; want the card (card_number comes before email)", v, by, ok)
	}
	if v, by, ok := d.Find("mail jane@example.com"); !ok || by != "email" || v != "jane@example.com" {
		t.Errorf("any.Find = %q, %q, %v", v, by, ok)
	}
	if _, _, ok := d.Find("nothing to see here, version 1.2.3 on 2024-01-15"); ok {
		t.Error("any found something in a clean text")
	}
	for _, name := range Names() {
		if d, ok := Lookup(name); !ok || d.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, d, ok)
		}
	}
	if _, ok := Lookup("credit_card"); ok {
		t.Error("Lookup(credit_card) succeeded")
	}
	want := []string{"api_key", "private_key", "card_number", "iban", "email", "phone_number"}
	if !slices.Equal(Names(), want) {
		t.Errorf("Names() = %v, want %v", Names(), want)
	}
}

func TestUnknown(t *testing.T) {
	const valid = "(valid: api_key, private_key, card_number, iban, email, phone_number, any)"
	for name, want := range map[string]string{
		"card_numbr":  `unknown detector "card_numbr"; did you mean card_number? ` + valid,
		"emails":      `unknown detector "emails"; did you mean email? ` + valid,
		"apikey":      `unknown detector "apikey"; did you mean api_key? ` + valid,
		"ani":         `unknown detector "ani"; did you mean any? ` + valid,
		"credit_card": `unknown detector "credit_card" ` + valid,
		"":            `unknown detector "" ` + valid,
	} {
		if got := Unknown(name).Error(); got != want {
			t.Errorf("Unknown(%q) = %q, want %q", name, got, want)
		}
	}
}

// A miss allocates nothing, in any detector.
func TestFindAllocatesNothingOnAMiss(t *testing.T) {
	for _, name := range append(Names(), Any) {
		d, _ := Lookup(name)
		if n := testing.AllocsPerRun(100, func() { d.Find(benchMiss) }); n != 0 {
			t.Errorf("%s: %.0f allocations on a miss", name, n)
		}
	}
}

// FuzzFind: no input panics a detector, a reported value is a substring
// of the input, and Find is deterministic.
func FuzzFind(f *testing.F) {
	for _, seed := range []string{
		benchMiss, benchHit["card_number"], benchHit["private_key"], "+44 (0)20 7946 0958", "GB82 WEST 1234 5698 7654 32",
		"jane%40example.com", `\u003cjane@example.org\u003e`, "Bearer ", "eyJ.eyJ.", "(", "+", "@", "%40", "-----BEGIN ",
		"LS0tLS1CRUdJTi", "4111 1111 1111 1111 123", "sk-", "xoxb-", "\\", "0",
	} {
		f.Add(seed)
	}
	detectors := []Detector{}
	for _, name := range append(Names(), Any) {
		d, _ := Lookup(name)
		detectors = append(detectors, d)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, d := range detectors {
			v, by, ok := d.Find(text)
			v2, by2, ok2 := d.Find(text)
			if v != v2 || by != by2 || ok != ok2 {
				t.Fatalf("%s: Find(%q) not deterministic", d.Name(), text)
			}
			if ok && (v == "" || !strings.Contains(text, v)) {
				t.Fatalf("%s: Find(%q) = %q, not a substring", d.Name(), text, v)
			}
			if ok && d.Name() != Any && by != d.Name() {
				t.Fatalf("%s: Find(%q) reported %q", d.Name(), text, by)
			}
			if !ok && (v != "" || by != "") {
				t.Fatalf("%s: Find(%q) = %q, %q without ok", d.Name(), text, v, by)
			}
		}
	})
}

// Text that repeats a trigger costs a bounded amount per trigger: a scan
// never reaches back or ahead over the rest of the text. Quadratic
// behaviour would take minutes on these 100 KB texts; the bound is
// generous for a loaded machine and the race detector.
func TestFindIsLinearOnRepeatedTriggers(t *testing.T) {
	d, _ := Lookup(Any)
	for _, unit := range []string{"sk-", "a%40", "xoxb-", "-eyJ", "-eyJ-eyJ.", "-----BEGIN PRIVATE KEY-----", "LS0tLS1CRUdJTi ",
		"@a.", "a@", "(1", "+1 ", "1 ", "4111 ", "GB82", "bearer ", "-bearer x", "AKIA", "ghp_", `\n`} {
		text := strings.Repeat(unit, 100_000/len(unit))
		start := time.Now()
		d.Find(text)
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("%q repeated to 100 KB: %v", unit, elapsed)
		}
	}
}
