// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/base64"
	"strings"
)

// pemType is a PEM label with the first characters its body really
// starts with (the DER or OpenSSH structure's fixed header) and its line
// width; the rest of each body is random base64 with FAKE and EXAMPLE
// words in it, so no block is a usable key or certificate.
type pemType struct {
	label, start string
	width        int
}

var privateKeyTypes = []pemType{
	{"RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 64},
	{"EC PRIVATE KEY", "MHcCAQEEI", 64},
	{"DSA PRIVATE KEY", "MIIBuwIBAAKBgQ", 64},
	{"OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA", 70},
	{"PRIVATE KEY", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASC", 64},
	{"ENCRYPTED PRIVATE KEY", "MIIFHDBOBgkqhkiG9w0BBQ0wQTAp", 64},
	{"PGP PRIVATE KEY BLOCK", "lQVYBG", 64},
}

var notPrivateTypes = []pemType{
	{"PUBLIC KEY", "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A", 64},
	{"RSA PUBLIC KEY", "MIIBCgKCAQEA", 64},
	{"CERTIFICATE", "MIIDdzCCAl+gAwIBAgIE", 64},
	{"CERTIFICATE REQUEST", "MIICijCCAXICAQAwRTEL", 64},
	{"X509 CRL", "MIIBzTCBtgIBATANBgkq", 64},
	{"PGP PUBLIC KEY BLOCK", "mQINBG", 64},
	{"PGP SIGNATURE", "iQIzBAABCAAdFiEE", 64},
	{"PGP MESSAGE", "hQIMA", 64},
	{"EC PARAMETERS", "BggqhkjOPQMBBw==", 64},
	{"DH PARAMETERS", "MIIBCAKCAQEA", 64},
}

// pemBody is lines of base64: the type's start, then random characters
// with a marker word in the first line.
func pemBody(r *rng, t pemType, lines int) []string {
	if t.label == "EC PARAMETERS" {
		return []string{t.start}
	}
	all := t.start + r.pick("FAKEKEYFORTESTSONLY", "EXAMPLEKEYNOTREAL", "THISISAFAKEKEY") + r.chars(base64Std, t.width*lines)
	var out []string
	for len(all) > t.width {
		out = append(out, all[:t.width])
		all = all[t.width:]
	}
	return append(out, all[:r.between(4, len(all))]+r.pick("", "=", "=="))
}

// pemBlock writes a whole block with eol line ends.
func pemBlock(r *rng, t pemType, eol string) string {
	body := pemBody(r, t, r.between(3, 9))
	var b strings.Builder
	b.WriteString("-----BEGIN " + t.label + "-----" + eol)
	if strings.HasPrefix(t.label, "PGP") {
		b.WriteString("Comment: generated for tests" + eol + eol)
	}
	for _, l := range body {
		b.WriteString(l + eol)
	}
	if strings.HasPrefix(t.label, "PGP") {
		b.WriteString("=" + r.chars(base64Std, 4) + eol)
	}
	b.WriteString("-----END " + t.label + "-----")
	return b.String()
}

var pemContexts = []string{
	`{"tool": "write_file", "args": {"path": "/home/app/.ssh/id_key", "content": "{J}\n"}}`,
	"$ cat ~/.ssh/id_key\n{V}\n$ ",
	"{\"output\": \"{J}\", \"exit_code\": 0}",
	`key = """{V}"""`,
	"resource \"tls_cert\" \"x\" {\n  private_key_pem = <<EOF\n{V}\nEOF\n}",
	"Here is the key you asked for:\n\n```\n{V}\n```",
	`PRIVATE_KEY="{J}"`,
	`2024-05-01T12:00:00Z DEBUG loaded signing key: {J}`,
	`{"input": "{\"private_key\": \"{JJ}\"}"}`,
	`{"messages": [{"role": "user", "content": "why does this fail? {J}"}]}`,
}

func privateKeyCases(c *corpus) {
	r := c.r
	const pem = "PEM labels from RFC 7468, OpenSSH and RFC 4880; body: the structure's real first characters, then random base64 with FAKE/EXAMPLE words"
	for _, t := range privateKeyTypes {
		c.embedded(20, t.label+" block", pem, pemContexts, func() string { return pemBlock(r, t, "\n") })
		c.embedded(3, t.label+" block with CRLF line ends", pem, pemContexts, func() string { return pemBlock(r, t, "\r\n") })
	}
	for range 8 {
		c.embedded(1, "legacy encrypted RSA key (Proc-Type and DEK-Info headers)", "OpenSSL's traditional encrypted PEM (RFC 1421 headers)", pemContexts, func() string {
			block := pemBlock(r, privateKeyTypes[0], "\n")
			header := "-----BEGIN RSA PRIVATE KEY-----\n"
			return header + "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + strings.ToUpper(r.chars(hexLower, 32)) + "\n\n" + block[len(header):]
		})
	}
	for range 12 {
		t := privateKeyTypes[r.intn(len(privateKeyTypes))]
		block := pemBlock(r, t, "\n")
		cut := block[:strings.Index(block, "\n")+1+r.between(110, 180)]
		cut = strings.TrimRight(cut, "\n")
		text, v := embed(r.pick(`{"output": "{J}... [truncated 1843 bytes]"}`, "$ head -c 200 key.pem\n{V}\n[output truncated]"), cut)
		c.positive("private key cut off before its END line", "real-world shape: a tool result truncated mid-key; the value ends with the body", text, v)
	}
	for range 8 {
		t := privateKeyTypes[r.intn(len(privateKeyTypes))]
		block := pemBlock(r, t, "\n")
		indented := strings.ReplaceAll(block, "\n", "\n    ")
		text := "apiVersion: v1\nkind: ConfigMap\ndata:\n  key.pem: |\n    " + indented + "\n  other: value"
		c.positive("private key in a YAML block scalar", "real-world shape: Kubernetes and Helm values", text, indented)
	}
	for range 12 {
		t := privateKeyTypes[r.intn(len(privateKeyTypes)-1)]
		encoded := base64.StdEncoding.EncodeToString([]byte(pemBlock(r, t, "\n") + "\n"))
		text, v := embed(r.pick("apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.key: {V}\n", `{"data": {"tls.key": "{V}", "tls.crt": "..."}}`), encoded)
		c.positive("base64-encoded PEM private key (Kubernetes Secret)", "real-world shape: kubectl get secret -o yaml", text, v)
	}
	for range 4 {
		block := pemBlock(r, privateKeyTypes[r.intn(5)], " ")
		text, v := embed(r.pick(`PRIVATE_KEY="{V}"`, `{"env": {"SIGNING_KEY": "{V}"}}`), block)
		c.positive("private key on one line, spaces for line breaks", "real-world shape: a key pasted into an environment variable", text, v)
	}
	for range 3 {
		text := "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: fake-key\nPublic-Lines: 2\n" + r.chars(base64Std, 64) + "\n" + r.chars(base64Std, 20) +
			"\nPrivate-Lines: 1\n" + r.chars(base64Std, 44) + "\nPrivate-MAC: " + r.chars(hexLower, 64)
		c.positive("PuTTY private key (.ppk)", "PuTTY's key file format; not a PEM block, so not found", `{"content": "`+text+`"}`, text)
	}
	privateKeyNegatives(c)
}

func privateKeyNegatives(c *corpus) {
	r := c.r
	const pem = "PEM labels from RFC 7468 and RFC 4880; random base64 bodies"
	counts := map[string]int{"PUBLIC KEY": 18, "RSA PUBLIC KEY": 12, "CERTIFICATE": 30, "CERTIFICATE REQUEST": 10, "X509 CRL": 5,
		"PGP PUBLIC KEY BLOCK": 10, "PGP SIGNATURE": 10, "PGP MESSAGE": 5, "EC PARAMETERS": 5, "DH PARAMETERS": 5}
	for _, t := range notPrivateTypes {
		c.embeddedNegatives(counts[t.label], t.label+" block", pem, pemContexts, func() string { return pemBlock(r, t, "\n") })
	}
	c.embeddedNegatives(15, "SSH public key line", "real-world shape: authorized_keys and .pub files",
		[]string{`{"content": "{V}\n"}`, `echo '{V}' >> ~/.ssh/authorized_keys`}, func() string {
			return r.pick("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"+r.chars(base64Std, 43), "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ"+r.chars(base64Std, 300)) + " jane@laptop"
		})
	c.embeddedNegatives(20, "redacted private key", "decided: a block whose key material was removed holds no secret",
		pemContexts, func() string {
			label := privateKeyTypes[r.intn(len(privateKeyTypes))].label
			return "-----BEGIN " + label + "-----\n" + r.pick("[REDACTED]", "...", "<your key here>", "MIIEpAIBAAKCAQEA...",
				strings.Repeat("X", 64)+"\n"+strings.Repeat("X", 64), "***", "(omitted: 1675 bytes)", strings.Repeat("x", 48)) + "\n-----END " + label + "-----"
		})
	c.embeddedNegatives(25, "code or docs naming the BEGIN line", "real-world shape: source that checks for a key header, and setup instructions",
		[]string{`{"code": "{J}"}`, `{V}`, `{"diff": "+{J}"}`}, func() string {
			label := privateKeyTypes[r.intn(len(privateKeyTypes))].label
			return r.pick(`if strings.HasPrefix(pem, "-----BEGIN `+label+`-----") {`,
				`if key.startswith("-----BEGIN `+label+`-----"):`,
				`const header = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;`,
				"The file must start with -----BEGIN "+label+"----- and end with -----END "+label+"-----.",
				`grep -l "BEGIN `+label+`" -r .`,
				`error: expected "-----BEGIN `+label+`-----", got "-----BEGIN CERTIFICATE-----"`)
		})
	c.embeddedNegatives(15, "prose or configuration about private keys", "real-world shape: key paths and advice",
		[]string{`{"text": "{V}"}`, `{V}`}, func() string {
			return r.pick("Never share your private key.", "private_key_path: /etc/ssl/private/server.key", "ssl_certificate_key /etc/nginx/ssl/example.key;",
				"Generate one with: openssl genpkey -algorithm ed25519 -out key.pem", "IdentityFile ~/.ssh/id_ed25519", "The PRIVATE KEY field is required.")
		})
	c.embeddedNegatives(15, "base64-encoded certificate or public key", "real-world shape: a Kubernetes Secret's tls.crt and ca.crt",
		[]string{"data:\n  tls.crt: {V}\n", `{"data": {"ca.crt": "{V}"}}`}, func() string {
			t := notPrivateTypes[r.intn(3)]
			return base64.StdEncoding.EncodeToString([]byte(pemBlock(r, t, "\n") + "\n"))
		})
	c.embeddedNegatives(5, "JWK public key", "real-world shape: a JSON Web Key set",
		[]string{`{"keys": [{V}]}`}, func() string {
			return `{"kty": "RSA", "kid": "` + r.chars(hexLower, 8) + `", "n": "` + r.chars(base64URL, 342) + `", "e": "AQAB"}`
		})
	c.embeddedNegatives(10, "BEGIN line without a body", "decided: a header alone (the rest cut off or omitted) holds no key material",
		[]string{`{"output": "{J}"}`, `{V}`}, func() string {
			label := privateKeyTypes[r.intn(len(privateKeyTypes))].label
			return "-----BEGIN " + label + "-----" + r.pick("", "\n", "\n(content omitted)", "\n[truncated]")
		})
}
