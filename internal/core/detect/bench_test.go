// SPDX-License-Identifier: Apache-2.0

package detect

import (
	"regexp"
	"strings"
	"testing"
)

// benchMiss is a realistic tool call's arguments, about 300 bytes, with
// digits, dates, an ID and URLs but nothing any detector finds.
const benchMiss = `{"tool": "create_ticket", "args": {"title": "Checkout fails for order 100234567", ` +
	`"body": "Since 2024-05-01 12:30 the payment step returns 502 (build 1.26.0, node 10.0.0.5). ` +
	`See https://status.example.com/incidents/8842?ref=mail and trace 4bf92f3577b34da6a3ce929d0e0e4736.", ` +
	`"labels": ["payments", "p1"], "assignee": "@platform-team"}}`

// benchHit is benchMiss with one value of each detector in its body.
var benchHit = map[string]string{
	"api_key":      withValue("key sk-proj-EXAMPLE_k3J9-xQ2mZ7vB4nR8tL1wP6yH0cF5dS"),
	"private_key":  withValue(`key -----BEGIN PRIVATE KEY-----\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCFAKEKEYFORTESTSq8Wm2LxP0vZr7Yh3\n-----END PRIVATE KEY-----`),
	"card_number":  withValue("card 4111 1111 1111 1111"),
	"iban":         withValue("IBAN GB82 WEST 1234 5698 7654 32"),
	"email":        withValue("mail jane.doe@example.com"),
	"phone_number": withValue("call +44 20 7946 0958"),
	Any:            withValue("call +44 20 7946 0958"),
}

// withValue puts value at the end of benchMiss's body, so a hit scans
// about as much text as a miss.
func withValue(value string) string {
	return strings.Replace(benchMiss, `e0e4736.", `, `e0e4736. `+value+`", `, 1)
}

// BenchmarkFind runs each detector over the same ~300-byte arguments with
// (hit) and without (miss) a value.
func BenchmarkFind(b *testing.B) {
	for _, name := range append(Names(), Any) {
		d, _ := Lookup(name)
		for _, c := range []struct{ name, text string }{{"hit", benchHit[name]}, {"miss", benchMiss}} {
			b.Run(name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.text)))
				for b.Loop() {
					if _, _, ok := d.Find(c.text); ok != (c.name == "hit") {
						b.Fatalf("found %v", ok)
					}
				}
			})
		}
	}
}

// BenchmarkPlainRegexp is the baseline: one plain regular expression for
// a digit run of card length, over the same texts.
func BenchmarkPlainRegexp(b *testing.B) {
	re := regexp.MustCompile(`\b\d{13,19}\b`)
	for _, c := range []struct{ name, text string }{{"hit", withValue("card 4111111111111111")}, {"miss", benchMiss}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				re.FindStringIndex(c.text)
			}
		})
	}
}
