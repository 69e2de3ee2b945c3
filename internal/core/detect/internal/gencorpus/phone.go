// SPDX-License-Identifier: Apache-2.0

package main

// phoneFormat writes a random number of one country in one of the ways
// people and systems write it. The structures follow the countries'
// numbering plans; the digits are random (for the UK the Ofcom drama
// ranges, for North America the 555 exchange).
type phoneFormat struct {
	kind  string
	write func(r *rng) string
}

func d(r *rng, n int) string { return r.chars(digits, n) }

// nanpArea is a North American area code: first digit 2-9.
func nanpArea(r *rng) string { return r.chars("23456789", 1) + d(r, 2) }

var phoneFormats = []phoneFormat{
	{"North American, E.164", func(r *rng) string { return "+1" + nanpArea(r) + "555" + d(r, 4) }},
	{"North American, international spaced", func(r *rng) string { return "+1 " + nanpArea(r) + " 555 " + d(r, 4) }},
	{"North American, international dashed", func(r *rng) string { return "+1-" + nanpArea(r) + "-555-" + d(r, 4) }},
	{"North American, international with area code in parentheses", func(r *rng) string { return "+1 (" + nanpArea(r) + ") 555-" + d(r, 4) }},
	{"North American, dotted", func(r *rng) string { return "+1." + nanpArea(r) + ".555." + d(r, 4) }},
	{"North American, (AAA) BBB-CCCC", func(r *rng) string { return "(" + nanpArea(r) + ") " + r.pick("555", "123", d(r, 3)) + "-" + d(r, 4) }},
	{"North American, AAA-BBB-CCCC", func(r *rng) string { return nanpArea(r) + "-555-" + d(r, 4) }},
	{"North American, AAA.BBB.CCCC", func(r *rng) string { return nanpArea(r) + ".555." + d(r, 4) }},
	{"North American, AAA BBB CCCC", func(r *rng) string { return nanpArea(r) + " 555 " + d(r, 4) }},
	{"North American, 1-800 number", func(r *rng) string { return "1-" + r.pick("800", "888", "877") + "-555-01" + d(r, 2) }},
	{"North American, 1 (AAA) BBB-CCCC", func(r *rng) string { return "1 (" + nanpArea(r) + ") 555-" + d(r, 4) }},
	{"North American, (AAA)BBB-CCCC", func(r *rng) string { return "(" + nanpArea(r) + ")555-" + d(r, 4) }},
	{"UK London, international", func(r *rng) string { return "+44 20 7946 0" + d(r, 3) }},
	{"UK London, international with (0)", func(r *rng) string { return "+44 (0)20 7946 0" + d(r, 3) }},
	{"UK London, E.164", func(r *rng) string { return "+4420794600" + d(r, 2) }},
	{"UK London, national", func(r *rng) string { return "020 7946 0" + d(r, 3) }},
	{"UK mobile, national", func(r *rng) string { return "07700 900" + d(r, 3) }},
	{"UK mobile, international", func(r *rng) string { return "+44 7700 900" + d(r, 3) }},
	{"Germany, international", func(r *rng) string { return "+49 30 " + d(r, 8) }},
	{"Germany, international with (0)", func(r *rng) string { return "+49 (0)30 " + d(r, 8) }},
	{"Germany, national", func(r *rng) string { return "030 " + d(r, 8) }},
	{"Germany mobile, national", func(r *rng) string { return "0151 " + d(r, 8) }},
	{"Germany mobile, international", func(r *rng) string { return "+49 151 " + d(r, 8) }},
	{"France, international", func(r *rng) string { return "+33 1 " + pairs(r, 4) }},
	{"France mobile, E.164", func(r *rng) string { return "+336" + d(r, 8) }},
	{"France, national", func(r *rng) string { return "01 " + pairs(r, 4) }},
	{"France mobile, national dotted", func(r *rng) string { return "06." + d(r, 2) + "." + d(r, 2) + "." + d(r, 2) + "." + d(r, 2) }},
	{"Japan, international", func(r *rng) string { return "+81 3-" + d(r, 4) + "-" + d(r, 4) }},
	{"Japan, national", func(r *rng) string { return "03-" + d(r, 4) + "-" + d(r, 4) }},
	{"Japan mobile, national", func(r *rng) string { return r.pick("090", "080") + "-" + d(r, 4) + "-" + d(r, 4) }},
	{"Australia, international", func(r *rng) string { return "+61 2 " + d(r, 4) + " " + d(r, 4) }},
	{"Australia, national with area code in parentheses", func(r *rng) string { return "(02) " + d(r, 4) + " " + d(r, 4) }},
	{"Australia mobile, national", func(r *rng) string { return "04" + d(r, 2) + " " + d(r, 3) + " " + d(r, 3) }},
	{"India mobile, international", func(r *rng) string { return "+91 9" + d(r, 4) + " " + d(r, 5) }},
	{"India mobile, dashed", func(r *rng) string { return "+91-9" + d(r, 4) + "-" + d(r, 5) }},
	{"Brazil mobile, international", func(r *rng) string { return "+55 11 9" + d(r, 4) + "-" + d(r, 4) }},
	{"Brazil, area code in parentheses", func(r *rng) string { return "+55 (21) 9" + d(r, 4) + "-" + d(r, 4) }},
	{"China mobile, international", func(r *rng) string { return "+86 13" + d(r, 1) + " " + d(r, 4) + " " + d(r, 4) }},
	{"Spain, international", func(r *rng) string { return "+34 91" + d(r, 1) + " " + d(r, 3) + " " + d(r, 3) }},
	{"Italy, international", func(r *rng) string { return "+39 06 " + d(r, 4) + " " + d(r, 4) }},
	{"Netherlands mobile, international", func(r *rng) string { return "+31 6 " + d(r, 8) }},
	{"Russia, international", func(r *rng) string { return "+7 495 " + d(r, 3) + "-" + d(r, 2) + "-" + d(r, 2) }},
	{"Russia, area code in parentheses", func(r *rng) string { return "+7 (495) " + d(r, 3) + "-" + d(r, 2) + "-" + d(r, 2) }},
	{"South Africa, international", func(r *rng) string { return "+27 21 " + d(r, 3) + " " + d(r, 4) }},
	{"Mexico, international", func(r *rng) string { return "+52 55 " + d(r, 4) + " " + d(r, 4) }},
	{"Ireland, international", func(r *rng) string { return "+353 1 " + d(r, 3) + " " + d(r, 4) }},
	{"Singapore, international", func(r *rng) string { return "+65 6" + d(r, 3) + " " + d(r, 4) }},
	{"UK, 00 international prefix", func(r *rng) string { return "0044 20 7946 0" + d(r, 3) }},
	{"Germany, 00 international prefix", func(r *rng) string { return "00 49 30 " + d(r, 8) }},
}

// pairs is n space-separated pairs of digits, as the French write them.
func pairs(r *rng, n int) string {
	s := d(r, 2)
	for range n - 1 {
		s += " " + d(r, 2)
	}
	return s
}

var phoneContexts = []string{
	`{"tool": "send_sms", "args": {"to": "{V}", "body": "Your code is ready"}}`,
	`{"contact": {"name": "Jane Doe", "phone": "{V}", "email_opt_in": false}}`,
	`Call me at {V} after 5pm.`,
	"Best regards,\nJane Doe\nHead of Sales\nTel: {V}",
	"BEGIN:VCARD\nFN:Jane Doe\nTEL;TYPE=cell:{V}\nEND:VCARD",
	`2024-05-01T12:00:00Z INFO sms.sent to={V} status=queued`,
	"name,phone,city\nJane Doe,{V},Leeds",
	`<a href="tel:{V}">Call us</a>`,
	`{"messages": [{"role": "user", "content": "my number is {V}, text me"}]}`,
	`{"body": "Hi!\n{V}\nis my new number."}`,
	`Phone: {V}.`,
	`{"input": "{\"callback_number\": \"{V}\"}"}`,
	`Reach the front desk on {V} (24h).`,
}

func phoneCases(c *corpus) {
	r := c.r
	const plans = "structure from the country's numbering plan; random digits (UK Ofcom drama ranges, North American 555 numbers)"
	for _, f := range phoneFormats {
		c.embedded(4, f.kind, plans, phoneContexts, func() string { return f.write(r) })
	}
	for range 6 {
		number := "(" + nanpArea(r) + ") 555-" + d(r, 4)
		text, _ := embed(r.pick(`Office: {V}`, `{"phone": "{V}"}`), number+r.pick(" ext. ", " x", " ext ")+d(r, 3))
		c.positive("number with an extension", "real-world shape: office numbers with extensions; the value is the number", text, number)
	}
	c.embedded(2, "digits in a WhatsApp link (no +, no separators)", "real-world shape: wa.me links; not found by design: a bare digit run",
		[]string{`Chat with us: https://wa.me/{V}`}, func() string { return "1" + nanpArea(r) + "555" + d(r, 4) })
	c.embedded(2, "country code in parentheses", "real-world shape: (+44) 20 …; not found: the parser starts at + or a digit",
		[]string{`Tel. {V}`}, func() string { return "(+44) 20 7946 0" + d(r, 3) })
	c.embedded(2, "seven-digit local number", "real-world shape: BBB-CCCC local numbers; not found by design",
		[]string{`call {V} for the front desk`}, func() string { return "555-01" + d(r, 2) })
	c.embedded(3, "North American number with spaced dashes", "real-world shape: 415 - 555 - 2671 as some forms print it",
		[]string{`Phone: {V}`, `{"phone": "{V}"}`}, func() string { return nanpArea(r) + " - 555 - " + d(r, 4) })
	phoneNegatives(c)
}

func phoneNegatives(c *corpus) {
	r := c.r
	generic := []string{`{"value": "{V}"}`, `{"result": "{V}", "ok": true}`, `value={V} processed`, `The answer is {V}.`}
	negatives := []struct {
		n            int
		kind, source string
		contexts     []string
		decoy        func() string
		also         []string
	}{
		{30, "date", "real-world shape: ISO, European, US and compact dates", []string{`{"date": "{V}"}`, `Invoice date: {V}`, `due {V} at the latest`}, func() string {
			y, m, dd := r.pick("2023", "2024", "2025"), r.pick("01", "05", "11", "12"), r.pick("03", "15", "28", "09")
			return r.pick(y+"-"+m+"-"+dd, dd+"/"+m+"/"+y, dd+"."+m+"."+y, y+"/"+m+"/"+dd, m+"-"+dd+"-"+y, y+m+dd, dd+"."+m+"."+y+" 14:30", y+"-"+m+"-"+dd+"T10:30:00+05:30")
		}, nil},
		{10, "time or duration", "real-world shape: clock times and durations", generic, func() string {
			return r.pick("12:30:45", "09:00-17:30", "00:05:30.123", "23:59", "1h 30m")
		}, nil},
		{15, "IP address", "real-world shape: IPv4 with and without port, IPv6", []string{`{"client_ip": "{V}"}`, `connect to {V} failed`, `remote_addr={V}`}, func() string {
			return r.pick("192.168."+d(r, 1)+"."+d(r, 2), "10.0.0."+d(r, 1)+":8080", "172.16.254.1", "2001:db8::1", "100.64.12.200")
		}, nil},
		{15, "version number", "real-world shape: semver, browser and OS build versions", []string{`{"version": "{V}"}`, `upgraded to {V}`, `go {V}`}, func() string {
			return r.pick("1.2.3", "v10.4.12", "2.31.0-beta.1", "4.17.21", "1.26.0", "120.0.6099.109", "10.0.19045.3803", "1.0.0+20130313144700")
		}, nil},
		{22, "order or invoice number without phone punctuation", "real-world shape: numeric and prefixed identifiers", []string{`{"order_id": "{V}"}`, `Order {V} shipped`, `invoice={V}`}, func() string {
			return r.pick(d(r, 9), "#"+nanpArea(r)+"555"+d(r, 4), "INV-2024-"+d(r, 6), "PO "+"45000"+d(r, 5), d(r, 11), "+"+d(r, 3))
		}, nil},
		{15, "card number", "real-world shape: grouped 16-digit card numbers", []string{`{"card": "{V}"}`, `card {V} declined`}, func() string {
			return grouped(cardNumber(r, "4", 16), r.pick(" ", "-"))
		}, []string{"card_number"}},
		{10, "Unix timestamp", "real-world shape: epoch seconds and milliseconds", []string{`{"ts": {V}}`, `since={V}`}, func() string {
			return r.pick("17"+d(r, 8), "17"+d(r, 11))
		}, nil},
		{10, "coordinates", "real-world shape: latitude and longitude", []string{`{"location": "{V}"}`, `at {V}`}, func() string {
			return r.pick("37.7749, -122.4194", "+40.689247,-74.044502", "48.8566, 2.3522", "-33.8688,151.2093", "+51.5072 -0.1276")
		}, nil},
		{6, "ISBN", "real-world shape: ISBN-10 and ISBN-13 with hyphens", []string{`{"isbn": "{V}"}`, `ISBN {V}`}, func() string {
			return r.pick("978-3-16-148410-0", "0-306-40615-2", "978-0-306-40615-7", "979-10-90636-07-1")
		}, nil},
		{6, "US Social Security number shape", "real-world shape: 3-2-4 digits", []string{`{"ssn": "{V}"}`, `SSN {V}`}, func() string {
			return d(r, 3) + "-" + d(r, 2) + "-" + d(r, 4)
		}, nil},
		{6, "ZIP+4 code", "real-world shape: US ZIP+4, some starting with 0", []string{`{"zip": "{V}"}`, `Boston, MA {V}`}, func() string {
			return r.pick("94105-", "02134-", "10001-", "01002-") + d(r, 4)
		}, nil},
		{10, "money amount", "real-world shape: amounts with thousands separators and signs", []string{`{"amount": "{V}"}`, `balance change {V}`}, func() string {
			return r.pick("$1,234,567.89", "1 234 567,89 €", "+12 345 678,90 EUR", "€ 1.234.567,89", "-4 500 000", "+1 250 000.00")
		}, nil},
		{5, "part number shaped like a North American number", "real-world shape: 3-3-4 SKUs; the detector cannot tell them from phone numbers", []string{`{"sku": "{V}"}`, `part no. {V}`}, func() string {
			return nanpArea(r) + "-" + d(r, 3) + "-" + d(r, 4)
		}, nil},
		{3, "bank account number shaped like a national number", "real-world shape: 0-prefixed grouped account numbers; the detector cannot tell them from phone numbers", []string{`{"account": "{V}"}`}, func() string {
			return "0" + r.chars("123456789", 1) + d(r, 2) + " " + d(r, 4) + " " + d(r, 2)
		}, nil},
		{5, "UUID or hex ID", "real-world shape: UUID v4 and hex IDs", generic, func() string {
			return d(r, 8) + "-" + d(r, 4) + "-4" + d(r, 3) + "-a" + d(r, 3) + "-" + d(r, 12)
		}, nil},
		{6, "numeric range", "real-world shape: page and year ranges", generic, func() string {
			return r.pick("pages 120-135", "1999-2024", "10-20%", "ages 18-65", "2023-2024 season")
		}, nil},
		{4, "scientific notation", "real-world shape: floats with exponents", generic, func() string {
			return r.pick("6.022e+23", "1.0e-10", "3.14E+05", "2.5e+12")
		}, nil},
		{4, "North American-shaped number with an impossible area code", "numbering plan: area codes never start with 0 or 1 (placeholder numbers)", []string{`{"phone": "{V}"}`, `e.g. {V}`}, func() string {
			return r.pick("(123) 456-7890", "123-456-7890", "(198) 765-4321", "1-123-555-0100")
		}, nil},
		{6, "too few digits for the country", "numbering plan: national number shorter than the country's", []string{`{"phone": "{V}"}`, `tel {V}`}, func() string {
			return r.pick("+1 555 0100", "+44 20 7946", "+33 1 42 68", "+49 30", "+91 98765", "+1 (415) 555")
		}, nil},
		{4, "signed percentage or temperature", "real-world shape: +N values", generic, func() string {
			return r.pick("+15°C", "+3.5%", "+120 bps", "+0.25")
		}, nil},
		{3, "IBAN", "real-world shape: IBAN in print form", []string{`{"iban": "{V}"}`}, func() string {
			return r.pick("GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00")
		}, []string{"iban"}},
		{3, "MAC address", "real-world shape: MAC addresses", generic, func() string {
			return r.pick("00:1A:2B:3C:4D:5E", "00-1A-2B-3C-4D-5E", "0012.3456.789a")
		}, nil},
		{4, "French company number (SIREN, SIRET)", "real-world shape: 3-3-3 and 3-3-3-5 grouped identifiers", []string{`{"siren": "{V}"}`, `SIRET {V}`}, func() string {
			return r.pick(d(r, 3)+" "+d(r, 3)+" "+d(r, 3), d(r, 3)+" "+d(r, 3)+" "+d(r, 3)+" "+d(r, 5))
		}, nil},
		{4, "Kubernetes resource version or large count", "real-world shape: unbroken numbers", []string{`{"resourceVersion": "{V}"}`, `processed {V} rows`}, func() string {
			return d(r, 9)
		}, nil},
	}
	for _, n := range negatives {
		c.embeddedNegatives(n.n, n.kind, n.source, n.contexts, n.decoy, n.also...)
	}
}
