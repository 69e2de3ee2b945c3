// SPDX-License-Identifier: Apache-2.0

package detect

import (
	"slices"
	"strings"
)

// An API key is a token in one of the formats the common providers
// document, each a fixed prefix and a random body of a known alphabet and
// length (see keyFormats), plus JSON Web Tokens and the credential of a
// "Bearer" authorization. A body must look random — letters and digits
// or both cases, eight distinct characters or more — so that placeholders
// (sk-xxxxxxxx…, ghp_XXXX…, Bearer YOUR_TOKEN) are not keys; a key
// containing EXAMPLE or FAKE in a valid format still is one. The prefix
// must start a word: "task-…" and "sk-learn" are not keys.
func findAPIKey(text string) (start, end int, ok bool) {
	for i := 0; i < len(text); i++ {
		if !keyTrigger[text[i]] {
			continue
		}
		if text[i] == 'e' {
			// Every eyJ inside a failed token's header fails the same
			// way: go on after the header.
			start, end, resume, ok := jwtAt(text, i)
			if ok {
				return start, end, true
			}
			i = max(i, resume-1)
			continue
		}
		if start, end, ok := apiKeyAt(text, i); ok {
			return start, end, true
		}
	}
	return 0, 0, false
}

// maxKeyBody bounds the body of a key without a fixed length: longer
// than any provider's, so a longer run is not a key.
const maxKeyBody = 256

// keyTrigger are the first bytes of every key prefix.
var keyTrigger = byteClass("srAgxeBb")

// keyFormat is one provider's key: a prefix, the body's alphabet and its
// length bounds (max 0: up to maxKeyBody). The body is the whole run of
// its alphabet after the prefix, so a longer run is not a key.
type keyFormat struct {
	prefix   string
	alphabet *byteSet
	min, max int
	mixed    bool // the body has both cases (or is lower-case hex), as random base62 does
}

// keyFormats are the documented formats. The bodies' lengths are the
// providers': OpenAI's sk- keys have 48 characters (project and service
// account keys more), Anthropic's 90 and more, AWS access key IDs 16,
// GitHub's tokens 36, Stripe's 24 and more, Google's API keys 35,
// GitLab's personal access tokens 20.
var keyFormats = []keyFormat{
	{"sk-ant-", &base64URLByte, 80, 0, true},  // Anthropic: sk-ant-api03-…
	{"sk-", &base64URLByte, 32, 0, true},      // OpenAI: sk-…, sk-proj-…, sk-svcacct-…
	{"sk_live_", &alnumByte, 24, 0, false},    // Stripe secret keys
	{"sk_test_", &alnumByte, 24, 0, false},    //
	{"rk_live_", &alnumByte, 24, 0, false},    // Stripe restricted keys
	{"rk_test_", &alnumByte, 24, 0, false},    //
	{"AKIA", &upperAlnum, 16, 16, false},      // AWS long-term access key ID
	{"ASIA", &upperAlnum, 16, 16, false},      // AWS temporary access key ID
	{"AIza", &base64URLByte, 35, 35, false},   // Google API key
	{"ghp_", &alnumByte, 36, 0, false},        // GitHub personal access token (classic)
	{"gho_", &alnumByte, 36, 0, false},        // GitHub OAuth access token
	{"ghu_", &alnumByte, 36, 0, false},        // GitHub user-to-server token
	{"ghs_", &alnumByte, 36, 0, false},        // GitHub server-to-server token
	{"ghr_", &alnumByte, 36, 0, false},        // GitHub refresh token
	{"github_pat_", &identByte, 82, 0, false}, // GitHub fine-grained token: 22 + _ + 59
	{"glpat-", &base64URLByte, 20, 0, false},  // GitLab personal access token
}

// apiKeyAt is the key, if any, whose trigger is text[i].
func apiKeyAt(text string, i int) (start, end int, ok bool) {
	switch text[i] {
	case 'x':
		return slackTokenAt(text, i)
	case 'B', 'b':
		return bearerTokenAt(text, i)
	}
	if i+1 >= len(text) {
		return 0, 0, false
	}
	rest := text[i:]
	for _, family := range keyFamilies {
		if family.first != rest[0] || family.second != rest[1] {
			continue
		}
		for k := range family.formats {
			f := &family.formats[k]
			if strings.HasPrefix(rest, f.prefix) {
				if end, ok := f.bodyEnd(text, i); ok {
					return i, end, true
				}
				return 0, 0, false
			}
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// keyFamily is the formats whose prefixes share their first two bytes:
// the scanner compares two bytes before comparing any prefix, as most
// trigger bytes are ordinary letters.
type keyFamily struct {
	first, second byte
	formats       []keyFormat
}

var keyFamilies = familiesOf(keyFormats)

// familiesOf groups formats by their prefixes' first two bytes, keeping
// their order (sk-ant- before sk-).
func familiesOf(formats []keyFormat) []keyFamily {
	var families []keyFamily
	for _, f := range formats {
		k := slices.IndexFunc(families, func(g keyFamily) bool { return g.first == f.prefix[0] && g.second == f.prefix[1] })
		if k < 0 {
			families = append(families, keyFamily{first: f.prefix[0], second: f.prefix[1]})
			k = len(families) - 1
		}
		families[k].formats = append(families[k].formats, f)
	}
	return families
}

// bodyEnd is the end of the key of format f starting at text[i].
func (f *keyFormat) bodyEnd(text string, i int) (int, bool) {
	if !startsWord(text, i) {
		return 0, false
	}
	from := i + len(f.prefix)
	limit := f.max
	if limit == 0 {
		limit = maxKeyBody
	}
	end := runEndMax(text, from, f.alphabet, limit)
	n := end - from
	if n < f.min || n > limit || !endsWord(text, end) {
		return 0, false
	}
	body := text[from:end]
	v := varietyOf(body)
	if f.alphabet == &upperAlnum {
		// An AWS key ID's base32 body need not have a digit.
		return end, v.distinct >= 8
	}
	if !v.random() || (f.mixed && !(v.upper && v.lower) && v.nonHex) {
		return 0, false
	}
	if f.prefix == "github_pat_" && !(len(body) >= 82 && body[22] == '_') {
		return 0, false
	}
	return end, true
}

// slackTokenAt reads a Slack token: xoxb- (bot), xoxp- (user), xoxa-,
// xoxo-, xoxr-, xoxs-, xoxe- and a body of dash-separated parts, the
// first numeric parts being workspace and user IDs.
func slackTokenAt(text string, i int) (start, end int, ok bool) {
	rest := text[i:]
	if len(rest) < 5 || !strings.HasPrefix(rest, "xox") || strings.IndexByte("abopres", rest[3]) < 0 || rest[4] != '-' {
		return 0, 0, false
	}
	if !startsWord(text, i) {
		return 0, 0, false
	}
	end = runEndMax(text, i+5, &slackByte, maxKeyBody)
	body := text[i+5 : end]
	if len(body) < 20 || len(body) > maxKeyBody || !hasDigitRun(body, 8) || !varietyOf(body).random() {
		return 0, 0, false
	}
	return i, end, true
}

var slackByte = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-")

// hasDigitRun is whether s has n digits in a row.
func hasDigitRun(s string, n int) bool {
	for i := 0; i < len(s); i++ {
		if digitByte[s[i]] {
			j := runEnd(s, i, &digitByte)
			if j-i >= n {
				return true
			}
			i = j
		}
	}
	return false
}

// jwtAt reads a JSON Web Token (RFC 7519, compact serialisation): three
// base64url parts separated by dots, the first a JSON header (so it
// starts eyJ, the encoding of `{"`), the signature at least 16
// characters. resume is where the scan may go on when there is none.
func jwtAt(text string, i int) (start, end, resume int, ok bool) {
	if !strings.HasPrefix(text[i:], "eyJ") || !startsWord(text, i) {
		return 0, 0, i + 1, false
	}
	header := runEndMax(text, i, &base64URLByte, maxJWTPart)
	if header-i < 10 || header-i > maxJWTPart || header >= len(text) || text[header] != '.' {
		return 0, 0, header, false
	}
	payload := runEndMax(text, header+1, &base64URLByte, maxJWTPart)
	if payload-header-1 < 4 || payload-header-1 > maxJWTPart || payload >= len(text) || text[payload] != '.' {
		return 0, 0, header, false
	}
	signature := runEndMax(text, payload+1, &base64URLByte, maxJWTPart)
	if signature-payload-1 < 16 || signature-payload-1 > maxJWTPart || !endsWord(text, signature) {
		return 0, 0, header, false
	}
	return i, signature, 0, true
}

// maxJWTPart bounds each part of a token: 64 KiB, far more than headers,
// claims and signatures take.
const maxJWTPart = 64 << 10

// bearerTokenAt reads the credential after "Bearer " (RFC 6750: the
// token68 alphabet, letters, digits and -._~+/ then = padding), at least
// 20 characters and random-looking. The value is the token alone.
func bearerTokenAt(text string, i int) (start, end int, ok bool) {
	const scheme = "bearer"
	if len(text)-i < len(scheme)+1 || !strings.EqualFold(text[i:i+len(scheme)], scheme) || !startsWord(text, i) {
		return 0, 0, false
	}
	start = i + len(scheme)
	if text[start] != ' ' {
		return 0, 0, false
	}
	for start < len(text) && text[start] == ' ' {
		start++
	}
	end = runEndMax(text, start, &token68Byte, maxJWTPart)
	for end < len(text) && text[end] == '=' {
		end++
	}
	token := strings.TrimRight(text[start:end], ".")
	if len(token) < 20 || len(token) > maxJWTPart || !varietyOf(token).random() {
		return 0, 0, false
	}
	return start, start + len(token), true
}

var token68Byte = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-._~+/")
