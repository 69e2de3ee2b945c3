// SPDX-License-Identifier: Apache-2.0

package detect

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// A private key is a PEM block whose label names a private key (PKCS #1
// RSA, SEC 1 EC, DSA, OpenSSH, PKCS #8 plain or encrypted, or an OpenPGP
// secret key block) and whose body holds key material: a base64 run of 40
// characters or more, so that a header quoted in code or a redacted block
// (`[REDACTED]`, `...`) is not a key. The value is the whole block, from
// -----BEGIN to -----END, or to the end of the body when the text was cut
// off before the END line. Public keys, certificates, requests and
// parameters are not private keys. A PEM private key base64-encoded once
// more (a Kubernetes Secret's tls.key) is found too: the value is the
// whole base64 run.
func findPrivateKey(text string) (start, end int, ok bool) {
	start, end, ok = findPEMPrivateKey(text)
	if s, e, found := findEncodedPrivateKey(text); found && (!ok || s < start) {
		return s, e, true
	}
	return start, end, ok
}

const (
	pemBegin = "-----BEGIN "
	pemDash  = "-----"
	// encodedPEMBegin is base64("-----BEGIN "), the first 14 characters
	// of every base64-encoded PEM file.
	encodedPEMBegin = "LS0tLS1CRUdJTi"
	// minKeyMaterial is the shortest base64 run taken as key material:
	// shorter than any key's first line, longer than a placeholder.
	minKeyMaterial = 40
)

// privateKeyLabels are the PEM labels of private keys.
var privateKeyLabels = []string{
	"PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY",
	"OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK",
}

// pemLines are each label's BEGIN and END lines, made once so that the
// scanner need not build them.
type pemLines struct {
	begin []byte
	end   string
}

var privateKeyLines = func() map[string]pemLines {
	lines := make(map[string]pemLines, len(privateKeyLabels))
	for _, l := range privateKeyLabels {
		lines[l] = pemLines{begin: []byte(pemBegin + l + pemDash), end: "-----END " + l + pemDash}
	}
	return lines
}()

func findPEMPrivateKey(text string) (start, end int, ok bool) {
	for from := 0; ; {
		k := strings.Index(text[from:], pemBegin)
		if k < 0 {
			return 0, 0, false
		}
		start = from + k
		if end, ok := pemPrivateKeyAt(text, start); ok {
			return start, end, true
		}
		from = start + len(pemBegin)
	}
}

// pemPrivateKeyAt is the end of the private key block whose BEGIN line
// starts at text[start].
func pemPrivateKeyAt(text string, start int) (end int, ok bool) {
	label, bodyStart, ok := pemLabel(text, start)
	lines, private := privateKeyLines[label]
	if !ok || !private {
		return 0, false
	}
	rest := text[bodyStart:]
	// The block ends at its END line, unless another block begins first:
	// then this one was cut off.
	bodyEnd := len(rest)
	if next := strings.Index(rest, pemBegin); next >= 0 {
		bodyEnd = next
	}
	if e := strings.Index(rest[:bodyEnd], lines.end); e >= 0 {
		if !hasKeyMaterial(rest[:e]) {
			return 0, false
		}
		return bodyStart + e + len(lines.end), true
	}
	body := rest[:runEnd(rest[:bodyEnd], 0, &pemBodyByte)]
	body = strings.TrimRight(body, " \t\r\n\\")
	if !hasKeyMaterial(body) {
		return 0, false
	}
	return bodyStart + len(body), true
}

// pemLabel reads the label of the BEGIN line at text[start] and where the
// line's closing dashes end.
func pemLabel(text string, start int) (label string, after int, ok bool) {
	from := start + len(pemBegin)
	labelEnd := runEnd(text, from, &pemLabelByte)
	if labelEnd-from > 40 || !strings.HasPrefix(text[labelEnd:], pemDash) {
		return "", 0, false
	}
	return text[from:labelEnd], labelEnd + len(pemDash), true
}

var (
	pemLabelByte = byteClass("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")
	base64Byte   = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/=")
	// pemBodyByte is what a key's body may hold, raw or inside a JSON
	// string: base64, line breaks and their escapes, and the
	// "Proc-Type: 4,ENCRYPTED" headers of legacy encrypted keys.
	pemBodyByte = byteClass("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/= \t\r\n\\:,-")
)

// hasKeyMaterial is whether body holds a base64 run of minKeyMaterial
// characters or more with the variety of random data: a line of XXXX is
// a redaction.
func hasKeyMaterial(body string) bool {
	for i := 0; i < len(body); i++ {
		if base64Byte[body[i]] {
			j := runEnd(body, i, &base64Byte)
			if j-i >= minKeyMaterial && varietyOf(body[i:j]).distinct >= 8 {
				return true
			}
			i = j
		}
	}
	return false
}

// findEncodedPrivateKey finds a base64-encoded PEM private key: a base64
// run that starts a word with encodedPEMBegin and decodes to a private
// key's BEGIN line.
func findEncodedPrivateKey(text string) (start, end int, ok bool) {
	for from := 0; ; {
		k := strings.Index(text[from:], encodedPEMBegin)
		if k < 0 {
			return 0, 0, false
		}
		start = from + k
		if start == 0 || !base64Byte[text[start-1]] || escapeEndsAt(text, start) {
			end = runEnd(text, start, &base64Byte)
			if end-start >= 2*minKeyMaterial+len(encodedPEMBegin) && decodesToPrivateKey(text[start:end]) {
				return start, end, true
			}
		}
		from = start + len(encodedPEMBegin)
	}
}

// decodesToPrivateKey decodes the start of run, enough for the longest
// BEGIN line, and reads its label.
func decodesToPrivateKey(run string) bool {
	var src [84]byte // decodes to 63 bytes, more than any BEGIN line
	n := copy(src[:], run)
	n -= n % 4
	var pem [63]byte
	m, _ := base64.StdEncoding.Decode(pem[:], src[:n])
	for _, lines := range privateKeyLines {
		if bytes.HasPrefix(pem[:m], lines.begin) {
			return true
		}
	}
	return false
}
