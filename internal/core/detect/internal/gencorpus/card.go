// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"strings"
)

// cardNetwork makes numbers of one network: its IIN prefixes and length.
type cardNetwork struct {
	name   string
	prefix func(*rng) string
	length int
}

func fixedPrefix(p ...string) func(*rng) string {
	return func(r *rng) string { return r.pick(p...) }
}

func prefixRange(low, high int) func(*rng) string {
	return func(r *rng) string { return fmt.Sprint(r.between(low, high)) }
}

// cardNetworks from the networks' published IIN ranges.
var cardNetworks = []cardNetwork{
	{"Visa 16", fixedPrefix("4"), 16},
	{"Visa 13", fixedPrefix("4"), 13},
	{"Visa 19", fixedPrefix("4"), 19},
	{"Mastercard 51-55", prefixRange(51, 55), 16},
	{"Mastercard 2-series", prefixRange(2221, 2720), 16},
	{"American Express", fixedPrefix("34", "37"), 15},
	{"Discover", fixedPrefix("6011", "65", "644", "645", "646", "647", "648", "649"), 16},
	{"JCB", prefixRange(3528, 3589), 16},
	{"Diners Club", fixedPrefix("36", "300", "301", "305", "38"), 14},
	{"UnionPay", fixedPrefix("62"), 16},
	{"UnionPay 19", fixedPrefix("62"), 19},
	{"Mir", prefixRange(2200, 2204), 16},
}

// luhnCheckDigit is the digit that completes payload under the Luhn
// check: the payload's digits from the right are doubled first.
func luhnCheckDigit(payload string) byte {
	sum := 0
	for i := 0; i < len(payload); i++ {
		d := int(payload[len(payload)-1-i] - '0')
		if i%2 == 0 {
			d = d*2/10 + d*2%10
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// cardNumber is a random Luhn-valid number with the prefix and length.
func cardNumber(r *rng, prefix string, length int) string {
	payload := prefix + r.chars(digits, length-len(prefix)-1)
	return payload + string(luhnCheckDigit(payload))
}

// breakLuhn changes the check digit to any other digit.
func breakLuhn(r *rng, number string) string {
	last := number[len(number)-1]
	wrong := byte('0' + (int(last-'0')+r.between(1, 9))%10)
	return number[:len(number)-1] + string(wrong)
}

// grouped writes a number as printed: fours (4-6-5 for 15 digits, 4-6-4
// for 14), joined by sep.
func grouped(number, sep string) string {
	var sizes []int
	switch len(number) {
	case 15:
		sizes = []int{4, 6, 5}
	case 14:
		sizes = []int{4, 6, 4}
	default:
		for n := len(number); n > 0; n -= 4 {
			sizes = append(sizes, min(4, n))
		}
	}
	var parts []string
	for _, s := range sizes {
		parts = append(parts, number[:s])
		number = number[s:]
	}
	return strings.Join(parts, sep)
}

// printed writes a number unbroken, spaced or dashed at random.
func printed(r *rng, number string) string {
	switch r.intn(3) {
	case 0:
		return number
	case 1:
		return grouped(number, " ")
	}
	return grouped(number, "-")
}

var cardContexts = []string{
	`{"tool": "charge_card", "args": {"card_number": "{V}", "exp_month": 12, "exp_year": 2027, "amount": 4250}}`,
	`{"payment_method": {"type": "card", "card": {"number": "{V}", "exp": "09/26", "holder": "JANE DOE"}}}`,
	`My card number is {V}, expiry 04/27. Can you update the subscription?`,
	`2024-05-01T12:00:03Z INFO payment.charge card={V} amount=42.50 currency=EUR status=approved`,
	`{"messages": [{"role": "user", "content": "Please put the order on {V} thanks"}]}`,
	`{"body": "Hi,\n\nplease charge the invoice to card {V} (exp 11/28).\n\nRegards,\nJane"}`,
	"| field | value |\n|---|---|\n| card | {V} |\n| exp | 03/29 |",
	`INSERT INTO payments (pan, amount_cents) VALUES ('{V}', 1999);`,
	"order_id,card,amount\nA-1042,{V},12.00",
	`{"result": "Saved card ending in {V} for customer cus_8842"}`,
	"Card: {V}\nName: Jane Roe\nBilling ZIP: 94105",
	`{"query": "update billing set card = '{V}' where account = 'acme'"}`,
	`curl -X POST https://api.example.com/v1/cards -d number={V} -d exp=12/27`,
	`{"input": "{\"card\": \"{V}\", \"save\": true}"}`,
}

// unbrokenCardContexts hold a card as a JSON number, where only the
// unbroken form fits.
var unbrokenCardContexts = []string{
	`{"pan": {V}, "amount": 1999, "currency": "usd"}`,
	`{"card": {"number": {V}, "cvc": "314"}}`,
}

func cardCases(c *corpus) {
	r := c.r
	const networks = "format and IIN ranges from the networks' published IIN tables; random digits with a Luhn check digit"
	for _, nw := range cardNetworks {
		c.embedded(13, nw.name+", unbroken, spaced or dashed", networks, cardContexts, func() string {
			return printed(r, cardNumber(r, nw.prefix(r), nw.length))
		})
		c.embedded(2, nw.name+", as a JSON number", networks, unbrokenCardContexts, func() string {
			return cardNumber(r, nw.prefix(r), nw.length)
		})
	}
	documented := []string{"4242424242424242", "4111111111111111", "5555555555554444", "2223003122003222",
		"378282246310005", "6011111111111117", "3530111333300000", "36227206271667", "6200000000000005", "4000056655665556"}
	for _, n := range documented {
		c.embedded(1, "a processor's published test card number", "payment processors' published test card numbers (Stripe, Braintree)", cardContexts, func() string {
			return printed(r, n)
		})
	}
	for range 6 {
		// The value is the number without the CVC typed after it.
		card := grouped(cardNumber(r, "4", 16), " ")
		text, _ := embed(r.pick(`Card {V} 12/27 please`, `{"content": "my card: {V}, exp 08/29"}`), card+" "+r.chars(digits, 3))
		c.positive("card number followed by a space and the CVC", "real-world shape: a customer typing number and CVC in one line", text, card)
	}
	c.embedded(4, "card number at the end of a URL query string", "real-world shape: a form posted as a GET request in an access log",
		[]string{`GET /checkout/confirm?plan=pro&card={V} HTTP/1.1" 302`, `https://shop.example.com/pay?amount=19.99&pan={V}`}, func() string {
			return cardNumber(r, "5"+fmt.Sprint(r.between(1, 5)), 16)
		})
	c.embedded(4, "card number after a JSON escape", "real-world shape: a card on its own line inside a JSON string",
		[]string{`{"note": "Customer card:\n{V}\nverified by phone"}`, `{"note": "card\t{V}\tok"}`}, func() string {
			return printed(r, cardNumber(r, "4", 16))
		})
	c.embedded(3, "card number with mixed separators", "real-world shape: hand-typed input mixing spaces and dashes",
		[]string{`Card number: {V}`}, func() string {
			g := grouped(cardNumber(r, "4", 16), " ")
			return g[:9] + "-" + g[10:]
		})
	c.embedded(2, "card number spaced with %20 in a URL", "real-world shape: a spaced card URL-encoded in a query string",
		[]string{`GET /pay?card={V}&exp=1227 HTTP/1.1`}, func() string {
			return strings.ReplaceAll(grouped(cardNumber(r, "4", 16), " "), " ", "%20")
		})

	cardNegatives(c)
}

func cardNegatives(c *corpus) {
	r := c.r
	const luhn = "same shapes as the positives with the check digit changed"
	for _, nw := range cardNetworks {
		c.embeddedNegatives(5, "Luhn-failing "+nw.name, luhn, cardContexts, func() string {
			return printed(r, breakLuhn(r, cardNumber(r, nw.prefix(r), nw.length)))
		})
	}
	orderContexts := []string{
		`{"order_id": "{V}", "status": "shipped", "carrier": "DHL"}`,
		`Your order {V} has been dispatched and will arrive on Friday.`,
		`{"invoice": {"number": "{V}", "total": "129.00", "currency": "EUR"}}`,
		`2024-05-01T12:00:03Z INFO fulfilment order={V} items=3 warehouse=AMS-2`,
		`{"tracking_number": "{V}", "service": "ground"}`,
	}
	c.embeddedNegatives(30, "long order, invoice or tracking ID", "real-world shape: random 13-19 digit identifiers; some may pass the Luhn check by chance", orderContexts, func() string {
		return r.chars("123456789", 1) + r.chars(digits, r.between(12, 18))
	})
	timestampContexts := []string{
		`{"created_at_ms": {V}, "event": "login"}`,
		`{"ts": "{V}", "level": "info", "msg": "span ended"}`,
		`time_unix_nano={V} span_id=4bf92f3577b34da6 name=tool.call`,
	}
	c.embeddedNegatives(10, "Unix timestamp in milliseconds", "real-world shape: epoch milliseconds 2020-2026", timestampContexts, func() string {
		return fmt.Sprint(r.between(1577836800, 1798761600)) + r.chars(digits, 3)
	})
	c.embeddedNegatives(10, "Unix timestamp in nanoseconds", "real-world shape: OpenTelemetry time_unix_nano", timestampContexts, func() string {
		return fmt.Sprint(r.between(1577836800, 1798761600)) + r.chars(digits, 9)
	})
	c.embeddedNegatives(6, "Unix timestamp in microseconds", "real-world shape: epoch microseconds", timestampContexts, func() string {
		return fmt.Sprint(r.between(1577836800, 1798761600)) + r.chars(digits, 6)
	})
	phoneContexts := []string{`{"phone": "{V}", "name": "Jane Doe"}`, `Call me on {V} after 5pm.`, `sms to={V} status=queued`}
	c.embeddedNegatives(12, "phone number", "real-world shape: E.164 and national phone numbers", phoneContexts, func() string {
		return r.pick("+1 415 555 "+r.chars(digits, 4), "+14155550"+r.chars(digits, 3), "+44 20 7946 0"+r.chars(digits, 3),
			"(212) 555-01"+r.chars(digits, 2), "+81 3-1234-"+r.chars(digits, 4))
	}, "phone_number")
	c.embeddedNegatives(14, "valid card number inside a longer digit run", "boundary: the run is one number of 17-24 digits, not a card",
		[]string{`{"reference": "{V}"}`, `ref={V} ok`, `Reference number {V}.`}, func() string {
			n := cardNumber(r, "4", 16)
			return r.pick(r.chars(digits, r.between(1, 6))+n, n+r.chars(digits, r.between(1, 6)), r.chars(digits, 2)+n+r.chars(digits, 2))
		})
	c.embeddedNegatives(10, "masked card number", "real-world shape: PCI-masked display forms",
		[]string{`{"card": "{V}", "brand": "visa"}`, `Charged card {V} successfully.`}, func() string {
			n := cardNumber(r, "4", 16)
			return r.pick(n[:4]+" **** **** "+n[12:], "************"+n[12:], n[:6]+"XXXXXX"+n[12:], n[:4]+"-XXXX-XXXX-"+n[12:])
		})
	c.embeddedNegatives(10, "IMEI (15 digits, Luhn-valid)", "real-world shape: IMEI with a reporting-body TAC prefix and Luhn check digit",
		[]string{`{"device": {"imei": "{V}", "model": "Pixel 8"}}`, `IMEI: {V}`, `device_imei={V} carrier=example`}, func() string {
			return cardNumber(r, r.pick("35", "86", "01", "99"), 15)
		})
	c.embeddedNegatives(8, "Luhn-valid 12-digit number with a Visa prefix", "length: one digit short of the shortest card",
		[]string{`{"account": "{V}"}`, `customer no. {V}`}, func() string { return cardNumber(r, "4", 12) })
	c.embeddedNegatives(12, "Luhn-valid number with no payment network's prefix", "real-world shape: loyalty, gift and membership card numbers (prefixes 1, 7, 8, 9)",
		[]string{`{"loyalty_card": "{V}", "points": 1200}`, `Gift card {V} has a balance of $25.00`, `member_id={V}`}, func() string {
			return printed(r, cardNumber(r, r.pick("1", "7", "8", "9", "0"), 16))
		})
	c.embeddedNegatives(8, "more than 19 digits in groups of four", "real-world shape: USPS tracking numbers (22 digits) and 20-digit grouped references",
		[]string{`{"tracking": "{V}"}`, `Track your parcel: {V}`}, func() string {
			return grouped("9400"+cardNumber(r, "4", 16)+r.chars(digits, 2), " ")
		})
	c.embeddedNegatives(10, "float with 16 or more fraction digits", "real-world shape: JSON floats printed at full precision",
		[]string{`{"lat": {V}, "lng": -122.41941550000001}`, `{"score": {V}}`}, func() string {
			return r.pick("0.", "37.", "-0.") + cardNumber(r, "4", 16)
		})
	c.embeddedNegatives(8, "ISBN-13", "real-world shape: ISBN-13 with and without hyphens",
		[]string{`{"isbn": "{V}", "title": "Example"}`, `ISBN {V}`}, func() string {
			return r.pick("978-0-306-40615-7", "9780306406157", "978-3-16-148410-0", "9783161484100", "979-10-90636-07-1")
		})
	c.embeddedNegatives(6, "IBAN (its digits are a long run)", "real-world shape: German IBAN, 18 digits after the check digits",
		[]string{`{"iban": "{V}"}`, `IBAN: {V}`}, func() string { return r.pick("DE89370400440532013000", "DE89 3704 0044 0532 0130 00") }, "iban")
}
