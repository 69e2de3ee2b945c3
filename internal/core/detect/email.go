// SPDX-License-Identifier: Apache-2.0

package detect

import "strings"

// An email address is a local part of letters, digits and . _ % + - '
// (not starting or ending with a dot, no two dots in a row), an '@' (or
// its URL encoding %40), and a domain of two or more dot-separated labels
// whose last is a top-level domain of two or more letters (or an xn--
// punycode label). Not addresses, on purpose: user@localhost and other
// one-label domains; @mentions, decorators and package specifiers
// (@google/adk@1.2.0: "1.2.0" is no domain); an SSH remote
// (git@github.com:org/repo) and the user of a URL (ssh://git@host/,
// https://user:pass@host/), which name an account on a host, not a
// mailbox; image names like logo@2x.png; code such as a@b.mean() (a
// domain followed by a parenthesis) and versions with two numeric labels
// (pkg@1.2.0-rc.beta).
func findEmail(text string) (start, end int, ok bool) {
	start, end, ok = findEmailAround(text, "@")
	if strings.Contains(text, "%40") {
		if s, e, found := findEmailAround(text, "%40"); found && (!ok || s < start) {
			return s, e, true
		}
	}
	return start, end, ok
}

// findEmailAround tries each occurrence of at, the '@' or its encoding.
func findEmailAround(text, at string) (start, end int, ok bool) {
	for from := 0; from < len(text); {
		k := strings.Index(text[from:], at)
		if k < 0 {
			break
		}
		k += from
		if start, end, ok := emailAt(text, k, k+len(at)); ok {
			return start, end, true
		}
		from = k + len(at)
	}
	return 0, 0, false
}

// localByte are the bytes of a local part that this detector accepts: the
// RFC 5322 atext that addresses use in practice (o'brien too), not the
// slashes, braces and equals signs that would swallow the text around an
// address.
var localByte = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz._%+-'")

// emailAt is the address whose '@' spans text[at:domain], if there is one.
func emailAt(text string, at, domain int) (start, end int, ok bool) {
	start, ok = localPartStart(text, at)
	if !ok {
		return 0, 0, false
	}
	end, ok = domainEnd(text, domain)
	if !ok || accountOnHost(text, start, end) {
		return 0, 0, false
	}
	return start, end, true
}

// maxLocalScan bounds the look back from an '@' for its local part: at
// most 64 characters (RFC 5321) after an escape of up to 5.
const maxLocalScan = 64 + 5

// localPartStart is where the local part ending at text[at] begins, with
// an escape before it dropped (`\u003cjane@`, `\njane@`, `%3Cjane@`).
func localPartStart(text string, at int) (int, bool) {
	s := runStartMax(text, at, &localByte, maxLocalScan)
	if at-s > maxLocalScan {
		return 0, false // a run too long to be a local part
	}
	if n := escapeLenAt(text, s); n > 0 && s+n <= at {
		s += n
	}
	if k := lastPercentEscape(text[s:at]); k >= 0 {
		s += k + 3 // ?q=a%20jane@…: the escape separates words
	}
	for s < at && (text[s] == '.' || text[s] == '\'') {
		s++ // a quote opening a string: 'jane@…'
	}
	local := text[s:at]
	if local == "" || len(local) > 64 || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return 0, false
	}
	if s > 0 && text[s-1] == '@' {
		return 0, false
	}
	return s, true
}

// lastPercentEscape is the index of the last %XX in s, or -1.
func lastPercentEscape(s string) int {
	for k := len(s) - 3; k >= 0; k-- {
		if s[k] == '%' && hexByte[s[k+1]] && hexByte[s[k+2]] {
			return k
		}
	}
	return -1
}

// domainEnd is the end of the domain starting at text[d]: labels of
// letters, digits and inner hyphens, at least two, the last a top-level
// domain.
func domainEnd(text string, d int) (int, bool) {
	labels, numeric := 0, 0
	end, tld := d, ""
	for j := d; j-d <= maxDomain; {
		k := runEndMax(text, j, &hostByte, maxDomain)
		label := text[j:k]
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			break
		}
		labels++
		if runEnd(label, 0, &digitByte) == len(label) {
			numeric++
		}
		end, tld = k, label
		if k+1 < len(text) && text[k] == '.' && hostByte[text[k+1]] {
			j = k + 1
			continue
		}
		break
	}
	if labels < 2 || end-d > maxDomain || !topLevelDomain(tld) || numeric >= 2 {
		// Two all-digit labels are a version (pkg@1.2.0-rc.beta), not a host.
		return 0, false
	}
	if end < len(text) && (identByte[text[end]] || text[end] == '@') {
		return 0, false
	}
	if isImageName(text[d:end]) || (end < len(text) && text[end] == '(') {
		return 0, false // logo@2x.png; a@b.mean(): a method call in code
	}
	return end, true
}

// maxDomain is the longest domain name (RFC 1035).
const maxDomain = 253

var hostByte = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-")

func topLevelDomain(label string) bool {
	if len(label) > 4 && strings.HasPrefix(label, "xn--") {
		return true
	}
	return len(label) >= 2 && len(label) <= 63 && runEnd(label, 0, &letterByte) == len(label)
}

// isImageName is whether a "domain" is the file name of a scaled image
// (icon@2x.png, logo@3x.webp): the suffix after '@' is a file's.
func isImageName(domain string) bool {
	dot := strings.LastIndexByte(domain, '.')
	switch strings.ToLower(domain[dot+1:]) {
	case "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "tif", "tiff", "avif", "heic":
		return true
	}
	return false
}

// accountOnHost is whether the address-like text[start:end] names an
// account on a host rather than a mailbox: the user part of a URL
// (scheme://user@host, scheme://user:password@host) or an SSH remote in
// scp form (git@github.com:org/repo.git, deploy@web-1:~/app).
func accountOnHost(text string, start, end int) bool {
	if end+1 < len(text) && text[end] == ':' && remotePathByte[text[end+1]] {
		return true
	}
	u := runStartMax(text, start, &userinfoByte, 256)
	return u >= 2 && text[u-2:u] == "//"
}

var (
	remotePathByte = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_~/.-")
	userinfoByte   = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz._%+-:")
)
