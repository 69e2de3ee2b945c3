// SPDX-License-Identifier: Apache-2.0

package main

import "strings"

// emailDomains are invented domains with a spread of top-level domains,
// most under the reserved example names of RFC 2606.
var emailDomains = []string{
	"example.com", "example.org", "example.net", "mail.example.com", "example.co.uk", "corp.example.io",
	"example-shop.de", "example.technology", "dept.example.ac.jp", "example.museum", "example.com.br",
	"eu.mail.example.fr", "example.dev", "123.example.cn", "xn--exmple-cua.example", "EXAMPLE.COM",
}

// emailLocal draws a local part in one of the common styles.
func emailLocal(r *rng) string {
	first := strings.ToLower(asciiName(r.pick(firstNames...)))
	last := strings.ToLower(asciiName(r.pick(lastNames...)))
	switch r.intn(12) {
	case 0:
		return first + "." + last
	case 1:
		return first[:1] + last
	case 2:
		return first + "_" + last
	case 3:
		return first + "-" + last
	case 4:
		return first + "+" + r.pick("newsletter", "receipts", "github", "test")
	case 5:
		return first + "." + last + r.chars(digits, 2)
	case 6:
		return strings.ToUpper(first + "." + last)
	case 7:
		return r.pick("info", "support", "no-reply", "billing", "hr", "security")
	case 8:
		return r.chars(lower, 1)
	case 9:
		return r.chars(digits, 6)
	case 10:
		return first + "." + r.chars(lower, 1) + "." + last
	}
	return last
}

// asciiName drops accents, as most local parts do.
func asciiName(s string) string {
	return strings.NewReplacer("í", "i", "é", "e", "á", "a").Replace(s)
}

func emailAddress(r *rng) string { return emailLocal(r) + "@" + r.pick(emailDomains...) }

var emailContexts = []string{
	`{"tool": "send_email", "args": {"to": ["{V}"], "subject": "Your invoice", "body": "Hi, please find it attached."}}`,
	`{"contact": {"name": "Jane Doe", "email": "{V}", "company": "Acme"}}`,
	"From: \"Jane Doe\" <{V}>\nSubject: Q3 report\n\nSee attached.",
	`Please reach out to {V} for access to the dashboard.`,
	"Author: Jane Doe <{V}>\nDate:   Mon May 6 10:12:44 2024 +0200\n\n    fix: retry on 503",
	"id,name,email\n17,Jane Doe,{V}",
	`<a href="mailto:{V}">Contact us</a>`,
	`{"html": "\u003cp\u003eWrite to \u003c{V}\u003e\u003c/p\u003e"}`,
	`2024-05-01T12:00:00Z INFO auth.login user={V} ip=10.0.0.5 result=ok`,
	`SELECT id FROM users WHERE email = '{V}';`,
	`{"messages": [{"role": "user", "content": "my email is {V}, can you resend the code?"}]}`,
	`Contact: {V}.`,
	`https://app.example.com/invite?email={V}&role=admin`,
	`{"body": "Thanks,\n{V}\nSales team"}`,
	`{"input": "{\"recipient\": \"{V}\"}"}`,
	`cc: {V}; reply within 2 days`,
	`{'email': '{V}', 'verified': True}`,
}

func emailCases(c *corpus) {
	r := c.r
	const shapes = "real-world shape: common local-part styles at invented example domains"
	c.embedded(170, "email address", shapes, emailContexts, func() string { return emailAddress(r) })
	c.embedded(6, "local part with an apostrophe", "RFC 5322 atext: apostrophes occur in names (o'brien)", emailContexts, func() string {
		return "o'" + strings.ToLower(r.pick("brien", "neil", "connor")) + "@" + r.pick(emailDomains...)
	})
	c.embedded(6, "email in a Python or SQL string", "real-world shape: single-quoted strings in code",
		[]string{`user = User(email='{V}')`, `INSERT INTO t VALUES ('{V}')`}, func() string { return emailAddress(r) })
	for range 10 {
		local, domain := emailLocal(r), r.pick(emailDomains...)
		text, v := embed(r.pick(
			`https://app.example.com/invite?email={V}&role=viewer`,
			`GET /api/v1/users/lookup?q={V} HTTP/1.1" 200 512`,
			`{"redirect": "https://login.example.com/reset?user={V}"}`,
		), local+"%40"+domain)
		c.positive("email percent-encoded in a URL (%40)", "real-world shape: an address in a URL query string", text, v)
	}
	c.embedded(4, "email followed by a colon in prose", "real-world shape: an address followed by a colon and a space",
		[]string{`Ask {V}: she owns the account.`}, func() string { return emailAddress(r) })
	c.embedded(4, "email in angle brackets after a JSON \\n", "real-world shape: a raw email header inside a JSON string",
		[]string{`{"raw": "To: Team\n\u003c{V}\u003e\nSubject: hi"}`, `{"raw": "Reply-To:\n{V}"}`}, func() string { return emailAddress(r) })
	emailNegatives(c)
}

func emailNegatives(c *corpus) {
	r := c.r
	word := func() string { return strings.ToLower(asciiName(r.pick(firstNames...))) }
	c.embeddedNegatives(15, "address at a single-label host (user@localhost)", "decided: no top-level domain, not a mailbox on the internet",
		[]string{`{"user": "{V}"}`, `sent mail to {V} via local MTA`, `MAILTO={V}`}, func() string {
			return r.pick("root", "admin", word(), "www-data") + "@" + r.pick("localhost", "intranet", "server01", "mailhost")
		})
	c.embeddedNegatives(6, "a@b", "too short: no domain with a dot", []string{`{"pattern": "{V}"}`, `e.g. {V}`}, func() string {
		return r.chars(lower, 1) + "@" + r.chars(lower, 1)
	})
	c.embeddedNegatives(20, "@mention", "real-world shape: chat and code-review mentions",
		[]string{`{"comment": "{V} can you review this?"}`, `RT {V}: shipping today`, `cc {V}`}, func() string {
			return "@" + r.pick(word()+"."+strings.ToLower(asciiName(r.pick(lastNames...))), word()+"_"+r.chars(digits, 2), "platform-team", word())
		})
	c.embeddedNegatives(30, "package specifier with a version", "real-world shape: npm, Go and uv package@version specifiers",
		[]string{`{"command": "npm install {V}"}`, `$ go install {V}`, `{"dependencies": ["{V}"]}`, `uv add {V}`}, func() string {
			v := r.chars("123456789", 1) + "." + r.chars(digits, r.between(1, 2)) + "." + r.chars(digits, 1)
			return r.pick("@google/adk@"+v, "@types/node@"+v, "lodash@"+v, "@angular/core@"+v, "react@"+v+"-canary.2",
				"golang.org/x/tools/gopls@v"+v, "httpx@"+v, "@scope/pkg@latest", "pkg@"+v+"-rc.beta")
		})
	c.embeddedNegatives(20, "git SSH remote (scp form)", "decided: an SSH remote names an account on a host, not a mailbox",
		[]string{`{"command": "git clone {V}"}`, `remote.origin.url={V}`, `git remote add upstream {V}`}, func() string {
			return "git@" + r.pick("github.com", "gitlab.example.com", "bitbucket.org", "git.example.org") + ":" + word() + "/" + r.pick("app", "infra", "docs") + ".git"
		})
	c.embeddedNegatives(8, "scp target", "decided: user@host:path is an SSH remote",
		[]string{`{"command": "scp backup.tar.gz {V}"}`, `rsync -av dist/ {V}`}, func() string {
			return r.pick("deploy", "ubuntu", "backup") + "@" + r.pick("backup.example.com", "web-1.prod.example.com") + ":" + r.pick("/srv/backups/", "~/app")
		})
	c.embeddedNegatives(20, "user in a URL", "decided: scheme://user[:password]@host names an account on a host",
		[]string{`{"url": "{V}"}`, `DATABASE_URL={V}`, `connecting to {V}`}, func() string {
			return r.pick("https://"+word()+":"+r.chars(base62, 10)+"@host.example.com/path",
				"ssh://git@git.example.com:2222/"+word()+"/repo.git",
				"postgres://app:"+r.chars(base62, 12)+"@db.example.com:5432/app",
				"redis://:"+r.chars(base62, 12)+"@cache.example.com:6379/0",
				"amqp://guest:guest@mq.example.com:5672/")
		})
	c.embeddedNegatives(10, "shell prompt", "real-world shape: user@host prompts in terminal output",
		[]string{`{"output": "{V} ls\nREADME.md"}`, `{V} make test`}, func() string {
			return r.pick("deploy@web-1.prod.example.com:~$", "[root@db-01 ~]#", "ubuntu@ip-10-0-0-5:~/app$", "jane@laptop:~/src$")
		})
	c.embeddedNegatives(4, "ssh login target", "decided: an SSH login names an account on a host; the detector cannot tell it from an address",
		[]string{`{"command": "ssh -i key.pem {V} uptime"}`, `ssh {V}`}, func() string {
			return r.pick("ubuntu", "ec2-user", "admin") + "@" + r.pick("bastion.example.com", "ec2-3-91-0-1.compute-1.example.com")
		})
	c.embeddedNegatives(10, "container image digest", "real-world shape: image@sha256:digest",
		[]string{`{"image": "{V}"}`, `docker pull {V}`}, func() string {
			return r.pick("nginx", "ghcr.io/example/app", "python") + "@sha256:" + r.chars(hexLower, 64)
		})
	c.embeddedNegatives(12, "scaled image file name", "real-world shape: @2x/@3x asset names",
		[]string{`{"src": "/static/{V}"}`, `<img src="{V}">`, `background: url({V});`}, func() string {
			return r.pick("logo", "icon-close", "hero", "avatar") + "@" + r.pick("2x", "3x", "1.5x") + "." + r.pick("png", "webp", "jpg", "svg")
		})
	c.embeddedNegatives(12, "decorator or CSS at-rule", "real-world shape: code",
		[]string{`{"code": "{V}\ndef handler(): pass"}`, `{V} { body { margin: 0 } }`, `{V}`}, func() string {
			return r.pick("@app.route('/users')", "@pytest.mark.parametrize('x', [1, 2])", "@media (max-width: 600px)",
				"@import url(theme.css);", "@dataclass(frozen=True)", "@Override")
		})
	c.embeddedNegatives(6, "matrix product in NumPy code", "real-world shape: Python's @ operator before a method call",
		[]string{`{"code": "y = {V}"}`, `loss = ({V}).sum()`}, func() string {
			return r.pick("weights@inputs.T", "a@b.mean(axis=0)", "x@w.transpose()", "q@k.swapaxes(-1, -2)")
		})
	c.embeddedNegatives(4, "Kerberos principal", "real-world shape: service/host@REALM; the detector cannot tell it from an address",
		[]string{`{"principal": "{V}"}`, `kinit -kt /etc/krb5.keytab {V}`}, func() string {
			return r.pick("HTTP/web01.example.com@EXAMPLE.COM", "nfs/fs1.corp.example.com@CORP.EXAMPLE.COM")
		})
	c.embeddedNegatives(24, "malformed address", "syntax: empty local part or domain, one-letter TLD, dots misplaced, label starting with a hyphen",
		[]string{`{"email": "{V}"}`, `invalid address: {V}`, `Email {V} was rejected`}, func() string {
			return r.pick(word()+".doe@", "@example.com", word()+"@example", word()+"@example.c", word()+"..doe@example.com",
				word()+".@example.com", word()+"@-example.com", word()+"@.com", word()+"@example..com")
		})
	c.embeddedNegatives(8, "percent-encoded @ in a package URL", "real-world shape: npm registry URLs of scoped packages",
		[]string{`{"url": "{V}"}`, `GET {V} 200`}, func() string {
			return r.pick("https://registry.npmjs.org/%40google%2Fadk", "https://registry.npmjs.org/%40types%2Fnode/-/node-20.1.0.tgz",
				"/npm/%40angular%2Fcore%4017.3.1/bundles")
		})
	c.embeddedNegatives(4, "Message-ID header", "real-world shape: RFC 5322 Message-IDs look like addresses; the detector cannot tell",
		[]string{"Message-ID: <{V}>", `{"headers": {"Message-ID": "<{V}>"}}`}, func() string {
			return r.chars(base62, 16) + "." + r.chars(digits, 6) + "@mail.example.com"
		})
	c.embeddedNegatives(8, "version constraint", "real-world shape: tool@version in CI and toolchain files",
		[]string{`{"uses": "{V}"}`, `- uses: {V}`}, func() string {
			return r.pick("actions/checkout@v4.1.1", "actions/setup-go@v5.0.0", "python@3.12.1", "node@20.11.1", "golang@1.22.3")
		})
}
