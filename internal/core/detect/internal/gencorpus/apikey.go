// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// keyFormat makes random keys of one provider's documented format.
type keyFormat struct {
	kind, source string
	make         func(r *rng) string
}

// fake puts a FAKE or EXAMPLE marker at the start of a body where the
// alphabet allows, keeping the body's length.
func fake(r *rng, alphabet string, n int) string {
	marker := r.pick("FAKE", "EXAMPLE", "TEST0FAKE")
	if n <= len(marker)+4 {
		return r.chars(alphabet, n)
	}
	return marker + r.chars(alphabet, n-len(marker))
}

// withMarker is n characters of alphabet with FAKE or EXAMPLE at a
// random place among them.
func withMarker(r *rng, alphabet string, n int) string {
	marker := r.pick("FAKE", "EXAMPLE")
	at := r.intn(n - len(marker) + 1)
	return r.chars(alphabet, at) + marker + r.chars(alphabet, n-len(marker)-at)
}

var keyFormats = []keyFormat{
	{"OpenAI secret key (legacy sk-)", "OpenAI key shape: sk- + 20 + T3BlbkFJ + 20 base62", func(r *rng) string {
		return "sk-" + fake(r, base62, 20) + "T3BlbkFJ" + r.chars(base62, 20)
	}},
	{"OpenAI project key (sk-proj-)", "OpenAI key shape: sk-proj- + base64url body", func(r *rng) string {
		return "sk-proj-" + fake(r, base64URL, r.between(48, 156))
	}},
	{"OpenAI service account key (sk-svcacct-)", "OpenAI key shape: sk-svcacct- + base64url body", func(r *rng) string {
		return "sk-svcacct-" + fake(r, base64URL, r.between(64, 156))
	}},
	{"OpenAI-compatible provider key (sk- + 32 hex)", "key shape of OpenAI-compatible providers (DeepSeek and others): sk- + 32 lower-case hex", func(r *rng) string {
		return "sk-" + r.chars(hexLower, 32)
	}},
	{"Anthropic API key (sk-ant-api03-)", "Anthropic key shape: sk-ant-api03- + 93 base64url + AA", func(r *rng) string {
		return "sk-ant-api03-" + fake(r, base64URL, 93) + "AA"
	}},
	{"AWS access key ID (AKIA)", "AWS documentation: AKIA + 16 upper-case base32 characters", func(r *rng) string {
		return "AKIA" + withMarker(r, base32, 16)
	}},
	{"AWS temporary access key ID (ASIA)", "AWS documentation: ASIA + 16 upper-case base32 characters", func(r *rng) string {
		return "ASIA" + withMarker(r, base32, 16)
	}},
	{"GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", "GitHub token format: prefix + 36 base62", func(r *rng) string {
		return r.pick("ghp_", "gho_", "ghu_", "ghs_", "ghr_") + fake(r, base62, 36)
	}},
	{"GitHub fine-grained token (github_pat_)", "GitHub token format: github_pat_ + 22 base62 + _ + 59 base62", func(r *rng) string {
		return "github_pat_" + fake(r, base62, 22) + "_" + r.chars(base62, 59)
	}},
	{"Slack bot token (xoxb-)", "Slack token format: xoxb- + workspace ID - bot ID - 24 base62", func(r *rng) string {
		return "xoxb-" + r.chars(digits, 11) + "-" + r.chars(digits, 13) + "-" + fake(r, base62, 24)
	}},
	{"Slack user token (xoxp-)", "Slack token format: xoxp- + three numeric IDs - 32 hex", func(r *rng) string {
		return "xoxp-" + r.chars(digits, 11) + "-" + r.chars(digits, 11) + "-" + r.chars(digits, 13) + "-" + r.chars(hexLower, 32)
	}},
	{"Stripe secret or restricted key", "Stripe key format: sk_live_/rk_live_/sk_test_/rk_test_ + 24 to 99 base62", func(r *rng) string {
		return r.pick("sk_live_", "rk_live_", "sk_test_", "rk_test_") + fake(r, base62, r.pickInt(24, 99))
	}},
	{"Google API key (AIza)", "Google Cloud API key format: AIza + 35 base64url", func(r *rng) string {
		return "AIza" + fake(r, base64URL, 35)
	}},
	{"GitLab personal access token (glpat-)", "GitLab token format: glpat- + 20 base64url", func(r *rng) string {
		return "glpat-" + fake(r, base64URL, 20)
	}},
	{"JSON Web Token", "RFC 7519 compact serialisation; fake claims, random signature", jwt},
}

// pickInt is pick for lengths.
func (r *rng) pickInt(options ...int) int { return options[r.intn(len(options))] }

// jwt is a token with a real JSON header and claims and a random
// signature of the algorithm's length.
func jwt(r *rng) string {
	alg, sig := []string{"HS256", "RS256", "ES256"}[r.intn(3)], 0
	switch alg {
	case "HS256":
		sig = 43
	case "RS256":
		sig = 342
	default:
		sig = 86
	}
	header := fmt.Sprintf(`{"alg":"%s","typ":"JWT"}`, alg)
	if r.intn(2) == 0 {
		header = fmt.Sprintf(`{"alg":"%s","kid":"%s","typ":"JWT"}`, alg, r.chars(hexLower, 8))
	}
	claims := fmt.Sprintf(`{"sub":"fake-user-%s","name":"EXAMPLE %s","iat":17%s,"exp":17%s}`,
		r.chars(digits, 4), r.person(), r.chars(digits, 8), r.chars(digits, 8))
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims)) + "." + r.chars(base64URL, sig)
}

var keyContexts = []string{
	`{"tool": "http_request", "args": {"url": "https://api.example.com/v1/chat", "headers": {"Authorization": "Bearer {V}"}}}`,
	`{"api_key": "{V}", "model": "example-model-1"}`,
	`OPENAI_API_KEY={V}`,
	`export GITHUB_TOKEN={V}`,
	`client = Client(api_key="{V}")`,
	`curl -H "Authorization: Bearer {V}" https://api.example.com/v1/models`,
	`https://maps.example.com/api/geocode/json?address=Paris&key={V}`,
	`https://api.example.com/v1/items?access_token={V}&page=2`,
	`2024-05-01T12:00:00Z DEBUG request headers={'x-api-key': '{V}', 'accept': 'application/json'}`,
	`{"body": "Hi team,\n\nthe new token is {V}\n\nThanks"}`,
	`{"script": "#!/bin/sh\nexport TOKEN={V}\ngh pr list"}`,
	`{"input": "{\"key\": \"{V}\"}"}`,
	`{"content": "config:\n{V}\nend"}`,
	"[default]\naws_access_key_id = {V}\nregion = eu-west-1",
	"api_key: {V}\ntimeout: 30",
	`Here is my key {V} please don't share it.`,
	`{"env": [{"name": "SERVICE_KEY", "value": "{V}"}]}`,
	`git remote set-url origin https://x-access-token:{V}@github.com/example/repo.git`,
	`https://example.com/login?next=%2Fmaps%3Fkey%3D{V}`,
	`{"messages": [{"role": "user", "content": "use this token: {V}"}]}`,
}

func apiKeyCases(c *corpus) {
	r := c.r
	for _, f := range keyFormats {
		n := 13
		if f.kind == "JSON Web Token" {
			n = 16
		}
		c.embedded(n, f.kind, f.source+"; random body", keyContexts, func() string { return f.make(r) })
	}
	for range 12 {
		token := r.pick(r.chars(base64URL, r.between(32, 64)), r.chars(hexLower, 40), r.chars(base62, 24)+"."+r.chars(base62, 16), r.chars(base64Std, 40)+"==")
		text, _ := embed(r.pick(`{"headers": {"Authorization": "{V}"}}`, `curl -H 'Authorization: {V}' https://api.example.com/me`, `Authorization: {V}`, `authorization={V}`), r.pick("Bearer ", "bearer ")+token)
		c.positive("opaque Bearer token", "RFC 6750 Authorization header; random token68 credential; the value is the token", text, token)
	}
	c.embedded(4, "key in a JSON string nested twice", "real-world shape: a tool call whose argument is a JSON document holding a script",
		[]string{`{"input": "{\"script\": \"export KEY={V}\\nrun\"}"}`}, func() string { return keyFormats[r.intn(len(keyFormats))].make(r) })
	for range 3 {
		token := r.chars(base64URL, 40)
		c.positive("Bearer token URL-encoded in a query string", "real-world shape: Authorization=Bearer%20… in a redirect URL; the scheme's space is %20",
			"https://app.example.com/cb?Authorization=Bearer%20"+token+"&state=xyz", token)
	}
	apiKeyNegatives(c)
}

func apiKeyNegatives(c *corpus) {
	r := c.r
	uuid := func() string {
		return r.chars(hexLower, 8) + "-" + r.chars(hexLower, 4) + "-4" + r.chars(hexLower, 3) + "-" + r.pick("8", "9", "a", "b") + r.chars(hexLower, 3) + "-" + r.chars(hexLower, 12)
	}
	generic := []string{`{"id": "{V}"}`, `request_id={V} status=200`, `{"result": {"value": "{V}"}}`, `The identifier is {V}.`}
	negatives := []struct {
		n            int
		kind, source string
		contexts     []string
		decoy        func() string
	}{
		{15, "UUID", "real-world shape: UUID v4", generic, uuid},
		{15, "git SHA or SHA-256 digest", "real-world shape: 40-hex commit IDs, 64-hex digests", []string{`{"commit": "{V}"}`, `HEAD is now at {V}`, `{"digest": "sha256:{V}"}`}, func() string {
			return r.chars(hexLower, r.pickInt(40, 64))
		}},
		{15, "base64 blob", "real-world shape: base64 of random bytes", []string{`{"data": "{V}"}`, `payload={V}`}, func() string {
			return base64.StdEncoding.EncodeToString([]byte(r.chars(base62+"\x00\x01\xff", r.between(30, 150))))
		}},
		{10, "sk-learn / scikit-learn", "real-world shape: the library's names", []string{`{"command": "pip install {V}"}`, `import {V}`, `We trained it with {V}.`}, func() string {
			return r.pick("scikit-learn", "sk-learn", "scikit-learn==1.4.2", "sklearn", "sk-learn-intelex")
		}},
		{12, "word ending in sk- followed by a random ID", "boundary: task-, disk-, mask- identifiers", generic, func() string {
			return r.pick("task-", "disk-", "mask-", "risk-", "desk-") + r.chars(base62, r.between(32, 48))
		}},
		{25, "placeholder key", "real-world shape: placeholders in docs and templates", []string{`{"api_key": "{V}"}`, `OPENAI_API_KEY={V}`, `export TOKEN={V}`}, func() string {
			return r.pick("sk-...", "sk-YOUR_API_KEY", "sk-"+strings.Repeat("x", 48), "ghp_"+strings.Repeat("X", 36), "AKIAXXXXXXXXXXXXXXXX",
				"AKIA****************", "<OPENAI_API_KEY>", "sk-proj-********", "sk_live_"+strings.Repeat("x", 24), "xoxb-your-token-here",
				"glpat-xxxxxxxxxxxxxxxxxxxx", "AIza"+strings.Repeat("X", 35), "sk-ant-api03-"+strings.Repeat("x", 95), "YOUR_API_KEY_HERE")
		}},
		{12, "masked or truncated key", "real-world shape: keys shown masked in dashboards and logs", []string{`{"api_key": "{V}"}`, `using key {V}`}, func() string {
			return r.pick("sk-proj-"+r.chars(base62, 4)+"..."+r.chars(base62, 4), "sk-...."+r.chars(base62, 4), "ghp_"+r.chars(base62, 4)+"…",
				"AKIA…EXAMPLE", "sk_live_****"+r.chars(base62, 4), "AKIA"+strings.Repeat("*", 12)+r.chars(base32, 4))
		}},
		{10, "Stripe publishable key", "decided: pk_live_/pk_test_ keys are public by design", []string{`{"publishableKey": "{V}"}`, `Stripe("{V}")`}, func() string {
			return r.pick("pk_live_", "pk_test_") + r.chars(base62, r.pickInt(24, 99))
		}},
		{15, "AWS ID that is not an access key", "AWS documentation: AIDA (user), AROA (role), ANPA (policy) unique IDs; AKIA of the wrong length", []string{`{"UserId": "{V}"}`, `{"RoleId": "{V}", "Arn": "arn:aws:iam::123456789012:role/Example"}`, `principal {V}`}, func() string {
			return r.pick("AIDA"+r.chars(base32, 17), "AROA"+r.chars(base32, 17), "ANPA"+r.chars(base32, 17), "AKIA"+r.chars(base32, 15), "AKIA"+r.chars(base32, 17))
		}},
		{10, "GitHub-like token of the wrong shape", "GitHub token format: too short, or an unknown type letter", []string{`{"token": "{V}"}`, `GH_TOKEN={V}`}, func() string {
			return r.pick("ghp_"+r.chars(base62, 20), "ghx_"+r.chars(base62, 36), "gh_"+r.chars(base62, 36), "ghp-"+r.chars(base62, 36))
		}},
		{15, "JWT-like text that is not a token", "real-world shape: base64 JSON without the three parts", []string{`{"config": "{V}"}`, `kubeconfig: {V}`, `state={V}`}, func() string {
			enc := base64.RawURLEncoding
			h := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
			p := enc.EncodeToString([]byte(`{"sub":"fake-user","iat":1700000000}`))
			return r.pick(enc.EncodeToString([]byte(`{"apiVersion":"v1","kind":"Config","clusters":[]}`)), h+"."+p, h+"."+p+".", r.chars(base62, 12)+h+"."+p+"."+r.chars(base64URL, 43))
		}},
		{15, "Bearer placeholder", "real-world shape: documentation and templates", []string{`{"headers": {"Authorization": "{V}"}}`, `curl -H "Authorization: {V}" https://api.example.com`, `{V}`}, func() string {
			return r.pick("Bearer <token>", "Bearer ${API_TOKEN}", "Bearer $TOKEN", "Bearer YOUR_ACCESS_TOKEN", "the bearer of bad news",
				"Bearer {{access_token}}", "Bearer null", "Bearer undefined", "Bearer REDACTED", "Bearer ***", "Bearer $(gcloud auth print-access-token)")
		}},
		{3, "Bearer placeholder with digits", "real-world shape: a placeholder that looks random enough; the detector cannot tell", []string{`{"headers": {"Authorization": "{V}"}}`}, func() string {
			return r.pick("Bearer token_placeholder_12345", "Bearer test-token-for-ci-0001")
		}},
		{10, "random ID without a key prefix", "real-world shape: session IDs, request IDs and nonces", generic, func() string {
			return r.chars(base62, r.pickInt(24, 32, 40, 48))
		}},
		{10, "key named but not given", "real-world shape: setup instructions", []string{`{"text": "{V}"}`, `{V}`}, func() string {
			return r.pick("Set OPENAI_API_KEY in your environment.", "sk_live_ keys are secret; use sk_test_ keys for testing.",
				"Create a token at https://github.com/settings/tokens (it starts with ghp_).", "AWS access key IDs begin with AKIA.",
				"Google API keys start with AIza.")
		}},
		{5, "Slovak locale code sk-SK", "real-world shape: Accept-Language headers", []string{`{"headers": {"Accept-Language": "{V}"}}`, `locale={V}`}, func() string {
			return r.pick("sk-SK,sk;q=0.9,en;q=0.8", "sk-SK", "cs-CZ,sk-SK")
		}},
		{5, "npm integrity hash", "real-world shape: package-lock.json integrity", []string{`{"integrity": "{V}"}`}, func() string {
			return "sha512-" + base64.StdEncoding.EncodeToString([]byte(r.chars(base62, 64)))
		}},
		{5, "AWS ARN", "real-world shape: ARNs", generic, func() string {
			return "arn:aws:iam::" + r.chars(digits, 12) + ":" + r.pick("role/Example", "user/ci-bot", "policy/ReadOnly")
		}},
		{5, "Google-like key of the wrong length", "Google API key format: AIza + 35 characters", []string{`{"key": "{V}"}`}, func() string {
			return "AIza" + r.chars(base64URL, r.pickInt(30, 39))
		}},
		{5, "sk- followed by a kebab-case name", "real-world shape: CSS classes and config names", generic, func() string {
			return r.pick("sk-fading-circle-animation-container-v2", "sk-my-long-configuration-name-for-testing-2", "sk-chase-dot-before-animation-delay-1s-x")
		}},
		{5, "Stripe object ID", "Stripe object IDs (cus_, pi_, ch_) are not secrets", generic, func() string {
			return r.pick("cus_", "pi_", "ch_", "sub_", "in_") + r.chars(base62, 24)
		}},
		{5, "documentation example with a sequential body", "real-world shape: docs write 'ghp_1234567890abcdef…'; the detector cannot tell it from a key", []string{`{"example": "{V}"}`, `e.g. TOKEN={V}`}, func() string {
			return r.pick("ghp_1234567890abcdefghijklmnopqrstuvwxyz", "sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL", "AKIA1234567890ABCDEF", "AIza1234567890abcdefghijklmnopqrstuvwxy")
		}},
		{3, "GitHub Actions secret reference", "real-world shape: workflow files", []string{`{"env": {"TOKEN": "{V}"}}`}, func() string {
			return r.pick("${{ secrets.GITHUB_TOKEN }}", "${{ secrets.OPENAI_API_KEY }}")
		}},
	}
	for _, n := range negatives {
		c.embeddedNegatives(n.n, n.kind, n.source, n.contexts, n.decoy)
	}
}
