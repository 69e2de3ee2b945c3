// SPDX-License-Identifier: Apache-2.0

// Command gencorpus writes the labelled corpus of testdata/detectors: for
// each detector of internal/core/detect, positives (texts holding a value
// it should find, and that value) and hard negatives (texts that look
// alike but hold none), embedded in the kinds of text tool arguments and
// results carry. It is deterministic: each file comes from its own
// pseudo-random stream with a fixed seed, so
//
//	go run ./internal/core/detect/internal/gencorpus -out testdata/detectors
//
// rewrites the committed files byte for byte. The generator shares no
// code with the detectors: it builds Luhn and mod-97 check digits its own
// way, so that the corpus checks the detectors rather than repeating
// them. Every key, card and account number is random and fake.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "testdata/detectors", "the directory to write the corpus files into")
	flag.Parse()
	for name, data := range files() {
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// family is one corpus file: a detector's name and the function that
// writes its cases.
type family struct {
	detector string
	generate func(*corpus)
}

var families = []family{
	{"api_key", apiKeyCases},
	{"private_key", privateKeyCases},
	{"email", emailCases},
	{"phone_number", phoneCases},
	{"card_number", cardCases},
	{"iban", ibanCases},
}

// files is the corpus: each file's name and JSON Lines content.
func files() map[string][]byte {
	out := make(map[string][]byte, len(families))
	for _, f := range families {
		c := &corpus{r: newRNG(f.detector)}
		f.generate(c)
		out[f.detector+".jsonl"] = c.encode()
	}
	return out
}

// line is one labelled case. Value is what a detector should report for a
// positive, exactly as it appears in Text; Also names the other detectors
// whose values the text holds on purpose (a card number among the phone
// number negatives), so that "any" does not count them as false.
type line struct {
	Text   string   `json:"text"`
	Label  bool     `json:"label"`
	Kind   string   `json:"kind"`
	Source string   `json:"source"`
	Value  string   `json:"value,omitempty"`
	Also   []string `json:"also,omitempty"`
}

type corpus struct {
	r     *rng
	lines []line
}

// positive adds a text holding value (as it appears in the text).
func (c *corpus) positive(kind, source, text, value string) {
	if !strings.Contains(text, value) {
		panic(fmt.Sprintf("%s: value %q not in text %q", kind, value, text))
	}
	c.lines = append(c.lines, line{Text: text, Label: true, Kind: kind, Source: source, Value: value})
}

// negative adds a text holding no value of the detector.
func (c *corpus) negative(kind, source, text string, also ...string) {
	c.lines = append(c.lines, line{Text: text, Label: false, Kind: kind, Source: source, Also: also})
}

// embedded adds n positives: value() in a context drawn from contexts.
func (c *corpus) embedded(n int, kind, source string, contexts []string, value func() string) {
	for range n {
		text, v := embed(c.r.pick(contexts...), value())
		c.positive(kind, source, text, v)
	}
}

// embeddedNegatives adds n negatives: decoy() in a context from contexts.
func (c *corpus) embeddedNegatives(n int, kind, source string, contexts []string, decoy func() string, also ...string) {
	for range n {
		text, _ := embed(c.r.pick(contexts...), decoy())
		c.negative(kind, source, text, also...)
	}
}

// embed puts v into a context at its marker: {V} as it is, {J} escaped
// for a JSON string, {JJ} escaped twice (JSON inside a JSON string). It
// returns the text and v as it appears there.
func embed(context, v string) (text, inText string) {
	for _, m := range []struct {
		marker string
		escape func(string) string
	}{
		{"{JJ}", func(s string) string { return jsonEscape(jsonEscape(s)) }},
		{"{J}", jsonEscape},
		{"{V}", func(s string) string { return s }},
	} {
		if strings.Contains(context, m.marker) {
			inText = m.escape(v)
			return strings.Replace(context, m.marker, inText, 1), inText
		}
	}
	panic("context without a marker: " + context)
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(b.String()), `"`), `"`)
}

func (c *corpus) encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, l := range c.lines {
		if err := enc.Encode(l); err != nil {
			panic(err)
		}
	}
	return b.Bytes()
}

// rng is SplitMix64: small, and its output fixed forever, unlike
// math/rand's, whose algorithms may change between Go releases.
type rng struct{ state uint64 }

// newRNG seeds a stream from a name, so that each file's stream is its
// own and changing one family's cases leaves the others' as they were.
func newRNG(name string) *rng {
	h := fnv.New64a()
	h.Write([]byte("agentguard detectors corpus v1 " + name))
	return &rng{state: h.Sum64()}
}

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn is uniform in [0, n) (the modulo bias is negligible for small n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between is uniform in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

func (r *rng) pick(options ...string) string { return options[r.intn(len(options))] }

// chars is n characters drawn from alphabet.
func (r *rng) chars(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.intn(len(alphabet))]
	}
	return string(b)
}

const (
	digits     = "0123456789"
	upper      = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower      = "abcdefghijklmnopqrstuvwxyz"
	base62     = upper + lower + digits
	base64URL  = base62 + "-_"
	base64Std  = base62 + "+/"
	upperAlnum = upper + digits
	base32     = upper + "234567"
	hexLower   = "0123456789abcdef"
)

// People for the contexts: invented.
var (
	firstNames = []string{"Jane", "John", "Amira", "Kenji", "Lucía", "Olu", "Priya", "Sven", "Chloé", "Mateo", "Wei", "Fatima"}
	lastNames  = []string{"Doe", "Roe", "Okafor", "Tanaka", "García", "Novak", "Iyer", "Larsen", "Dubois", "Rossi", "Chen", "Haddad"}
)

func (r *rng) person() string { return r.pick(firstNames...) + " " + r.pick(lastNames...) }
