// SPDX-License-Identifier: Apache-2.0

// Package detect finds secrets and personal data in the text of tool
// arguments and results: API keys, private keys, email addresses, phone
// numbers, payment card numbers and IBANs. Each detector is a named finder
// that reports the exact substring it found, so that a flow can check the
// same value reappearing later.
//
// The finders are hand-written scanners rather than regular expressions:
// Go's regexp has no lookaround, and each family needs checks a pattern
// cannot express (a Luhn or mod-97 checksum, a country's IBAN length, a
// word boundary that a JSON escape makes). Each starts from a cheap trigger
// (an '@', a digit run, a key's prefix) and allocates nothing.
// docs/detectors.md says what each one matches and what it does not, with
// the precision and recall measured on testdata/detectors.
package detect

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/internal/spelling"
)

// Any is the name of the detector that runs every other one.
const Any = "any"

// finder reports the first value of one family in text, as text[start:end].
type finder func(text string) (start, end int, ok bool)

type namedFinder struct {
	name string
	find finder
}

// detectors are the named detectors in Names order: for "any" the first
// of them that finds a value wins, so the secrets come first, then the
// numbers a checksum confirms, and the phone number, the most heuristic,
// last: the digits of an IBAN's BBAN can look like a phone number, never
// the other way round.
var detectors = []namedFinder{
	{"api_key", findAPIKey},
	{"private_key", findPrivateKey},
	{"card_number", findCard},
	{"iban", findIBAN},
	{"email", findEmail},
	{"phone_number", findPhone},
}

// Detector finds one family of values, or every family for "any". It is
// a small value with no mutable state: copy it and use it from any
// goroutine.
type Detector struct {
	name    string
	finders []namedFinder
}

// Names lists the detectors in a stable order, "any" not included.
func Names() []string {
	names := make([]string, len(detectors))
	for i, d := range detectors {
		names[i] = d.name
	}
	return names
}

// Lookup returns the detector called name: one of Names, or "any" for all
// of them. ok is false for any other name; Unknown(name) says why.
func Lookup(name string) (Detector, bool) {
	if name == Any {
		return Detector{name: Any, finders: detectors}, true
	}
	for i := range detectors {
		if detectors[i].name == name {
			return Detector{name: name, finders: detectors[i : i+1]}, true
		}
	}
	return Detector{}, false
}

// Name is the name the detector was looked up by.
func (d Detector) Name() string { return d.name }

// Find reports the first value in text: the matched substring exactly as
// it appears in text, and the name of the detector that found it. With
// "any" the detectors run in Names order and the first to find a value
// wins, even if another's value starts earlier in the text.
func (d Detector) Find(text string) (value, detector string, ok bool) {
	for _, f := range d.finders {
		if start, end, found := f.find(text); found {
			return text[start:end], f.name, true
		}
	}
	return "", "", false
}

// Unknown is the error for a detector name that Lookup does not know: it
// lists the valid names and suggests the nearest within two edits.
func Unknown(name string) error {
	valid := append(Names(), Any)
	msg := fmt.Sprintf("unknown detector %q", name)
	if near := nearest(name, valid); near != "" {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	return errors.New(msg + " (valid: " + strings.Join(valid, ", ") + ")")
}

// nearest is the valid name within two edits of name (the first in order
// on a tie), or "" when none is that near.
func nearest(name string, valid []string) string {
	best, bestDistance := "", 3
	for _, v := range valid {
		if d := spelling.EditDistance(name, v); d < bestDistance {
			best, bestDistance = v, d
		}
	}
	return best
}
