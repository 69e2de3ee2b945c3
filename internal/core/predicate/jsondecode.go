// SPDX-License-Identifier: Apache-2.0

package predicate

// OTTL's ParseJSON decodes a text with goccy/go-json into map[string]any and
// []any, then copies that into pcommon values (FromRaw): every value is
// allocated twice, and maps are hashed only to be walked once. decodeJSON
// builds the pcommon values straight from the text, for the memo's misses.
//
// It decides only where it is sure to give what ParseJSON gives, and
// declines elsewhere, so that the memo runs OTTL's own ParseJSON (its result
// or its error, exactly):
//   - It accepts JSON as RFC 8259 defines it, with an object or an array at
//     the top, which goccy accepts too. goccy also accepts some texts that
//     are not JSON (a number as strconv.ParseFloat reads it, such as 01 or
//     1.; a raw control character in a string; null as a key; anything after
//     a NUL byte): decodeJSON declines them, as it declines every error.
//   - Its values are goccy's, converted by FromRaw: a number is the float64
//     strconv.ParseFloat reads from its text (goccy's own call), a string
//     keeps its bytes as they are (goccy does not check UTF-8), \u escapes
//     are decoded as goccy decodes them (a surrogate pair joined, any other
//     surrogate U+FFFD), null is an empty value, the last of duplicate keys
//     wins, an empty array or object is an empty Slice or Map.
//   - It declines a top level that is not an object or an array and a
//     number out of float64's range (both OTTL errors), nesting deeper than
//     maxJSONDepth (goccy's limit is 10 000) and an object of more than
//     maxJSONKeys keys: pcommon finds a key by scanning the keys before it,
//     so that building a big object key by key would be quadratic.
//
// A map's keys are in the text's order, a duplicate key where it first
// appears; ParseJSON's order is a Go map's, which is random: no condition
// can rely on it.

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

const (
	maxJSONDepth = 1000
	maxJSONKeys  = 128
	// Containers are counted ahead up to hintedSizes of them, hintedDepth
	// deep; any other starts with room for firstRoom members.
	hintedSizes = 64
	hintedDepth = 32
	firstRoom   = 4
)

// decodeJSON returns OTTL's ParseJSON of text, a pcommon.Map or a
// pcommon.Slice, and true; or false where it leaves text to OTTL.
func decodeJSON(text string) (any, bool) {
	d := jsonDecoder{text: text}
	d.count()
	d.space()
	var out any
	var ok bool
	switch d.peek() {
	case '{':
		m := pcommon.NewMap()
		out, ok = m, d.object(m)
	case '[':
		s := pcommon.NewSlice()
		out, ok = s, d.array(s)
	}
	d.space()
	if !ok || d.pos != len(text) {
		return nil, false
	}
	return out, true
}

// jsonDecoder reads text from pos; each method returns false where it
// declines.
type jsonDecoder struct {
	text   string
	pos    int
	depth  int
	opened int                // the containers opened so far
	sizes  [hintedSizes]int32 // the first ones' members, counted ahead
}

// count fills sizes, for the first containers in the order they open, with
// one more than the commas directly inside each (outside strings): a pass
// with no allocation, so that a container is allocated at its size once
// rather than grown. It checks nothing, decoding does: in a text that is not
// JSON the sizes may be wrong, but they are used only for room, and room is
// never more than one member a comma in the text (an object's, no more than
// maxJSONKeys).
func (d *jsonDecoder) count() {
	const none = -1
	var open [hintedDepth]int // each open container's index in sizes, or none
	depth, opened := 0, 0
	for i := 0; i < len(d.text); i++ {
		switch d.text[i] {
		case '"':
			for i++; i < len(d.text) && d.text[i] != '"'; i++ {
				if d.text[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth < len(open) {
				open[depth] = none
				if opened < len(d.sizes) {
					open[depth] = opened
					d.sizes[opened] = 1
				}
			}
			depth++
			opened++
		case '}', ']':
			if depth == 0 {
				return
			}
			depth--
		case ',':
			if 0 < depth && depth <= len(open) && open[depth-1] != none {
				d.sizes[open[depth-1]]++
			}
		}
	}
}

// room is the size counted for the container opening now, or firstRoom
// past those counted.
func (d *jsonDecoder) room() int {
	i := d.opened
	d.opened++
	if i < len(d.sizes) && d.sizes[i] > 0 {
		return int(d.sizes[i])
	}
	return firstRoom
}

// peek is the byte at pos, or 0 at the end: a NUL in the text is never
// JSON, so either way the byte matches nothing expected.
func (d *jsonDecoder) peek() byte {
	if d.pos < len(d.text) {
		return d.text[d.pos]
	}
	return 0
}

// space skips JSON's whitespace, the same four bytes as goccy's.
func (d *jsonDecoder) space() {
	for d.pos < len(d.text) {
		switch d.text[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// object reads an object into m, from its '{' on.
func (d *jsonDecoder) object(m pcommon.Map) bool {
	return d.members(maxJSONKeys, func(room int) { m.EnsureCapacity(min(room, maxJSONKeys)) },
		// PutEmpty replaces the value of a duplicate key, where it is.
		func(key string) bool { return d.value(m.PutEmpty(key)) })
}

// array reads an array into s, from its '[' on.
func (d *jsonDecoder) array(s pcommon.Slice) bool {
	return d.elements(s.EnsureCapacity, func() bool { return d.value(s.AppendEmpty()) })
}

// members reads an object from its '{' on, of at most limit members (0:
// any): open (if set) gets the room counted for it before its first member,
// and member reads each member's value, pos at it.
func (d *jsonDecoder) members(limit int, open func(room int), member func(key string) bool) bool {
	return d.container('}', open, func() bool {
		if d.peek() != '"' {
			return false
		}
		key, ok := d.str()
		if !ok {
			return false
		}
		d.space()
		if d.peek() != ':' {
			return false
		}
		d.pos++
		d.space()
		return member(key)
	}, limit)
}

// elements reads an array from its '[' on: element reads each value.
func (d *jsonDecoder) elements(open func(room int), element func() bool) bool {
	return d.container(']', open, element, 0)
}

// container reads what follows an opening bracket up to its closing one:
// item reads one member or element, and the separators are read here.
func (d *jsonDecoder) container(closing byte, open func(room int), item func() bool, limit int) bool {
	if d.depth++; d.depth > maxJSONDepth {
		return false
	}
	room := d.room()
	d.pos++
	d.space()
	if d.peek() == closing {
		d.pos++
		d.depth--
		return true
	}
	if open != nil {
		open(room)
	}
	for n := 1; limit == 0 || n <= limit; n++ {
		if !item() {
			return false
		}
		d.space()
		switch d.peek() {
		case ',':
			d.pos++
			d.space()
		case closing:
			d.pos++
			d.depth--
			return true
		default:
			return false
		}
	}
	return false
}

// value reads one value into v, which is empty: a null leaves it so. v
// points into its container's storage, so it is set before anything else
// is added there; a nested map or slice has storage of its own.
func (d *jsonDecoder) value(v pcommon.Value) bool {
	switch d.peek() {
	case '{':
		return d.object(v.SetEmptyMap())
	case '[':
		return d.array(v.SetEmptySlice())
	case '"':
		s, ok := d.str()
		v.SetStr(s)
		return ok
	case 't':
		v.SetBool(true)
		return d.literal("true")
	case 'f':
		v.SetBool(false)
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	f, ok := d.number()
	v.SetDouble(f)
	return ok
}

func (d *jsonDecoder) literal(word string) bool {
	if !strings.HasPrefix(d.text[d.pos:], word) {
		return false
	}
	d.pos += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? and parses it
// as goccy does. What follows it is its caller's to check: 01 reads as 0,
// then 1 is neither a comma nor a bracket.
func (d *jsonDecoder) number() (float64, bool) {
	start := d.pos
	if d.peek() == '-' {
		d.pos++
	}
	switch c := d.peek(); {
	case c == '0':
		d.pos++
	case '1' <= c && c <= '9':
		d.digits()
	default:
		return 0, false
	}
	if d.peek() == '.' {
		d.pos++
		if !d.digits() {
			return 0, false
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.pos++
		if c := d.peek(); c == '+' || c == '-' {
			d.pos++
		}
		if !d.digits() {
			return 0, false
		}
	}
	// The only error left is a number out of range, which goccy returns.
	f, err := strconv.ParseFloat(d.text[start:d.pos], 64)
	return f, err == nil
}

// digits skips [0-9]+, false if there is none.
func (d *jsonDecoder) digits() bool {
	start := d.pos
	for d.pos < len(d.text) && '0' <= d.text[d.pos] && d.text[d.pos] <= '9' {
		d.pos++
	}
	return d.pos > start
}

// stringStop marks the bytes a string's scan stops at: its closing quote,
// an escape, and the control characters JSON does not allow raw.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// plainEnd is the index of the first byte from i that stringStop marks, or
// len(text).
func plainEnd(text string, i int) int {
	for i < len(text) && !stringStop[text[i]] {
		i++
	}
	return i
}

// str reads a string from its opening quote. One without escapes is a slice
// of the text, which the memo keeps alive as long as the result anyway.
func (d *jsonDecoder) str() (string, bool) {
	start := d.pos + 1
	i := plainEnd(d.text, start)
	if i < len(d.text) && d.text[i] == '"' {
		d.pos = i + 1
		return d.text[start:i], true
	}
	if i < len(d.text) && d.text[i] == '\\' {
		return d.escaped(start, i)
	}
	return "", false
}

// escaped reads a string with escapes, its text starting at start and its
// first escape at i: first to its end, then decoding it into a buffer of
// that size, which no escape decodes longer than it is written.
func (d *jsonDecoder) escaped(start, i int) (string, bool) {
	end := i
	for end < len(d.text) && d.text[end] == '\\' {
		end = plainEnd(d.text, end+2) // the escaped byte is checked below
	}
	if end >= len(d.text) || d.text[end] != '"' {
		return "", false
	}
	raw := d.text[start:end]
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		j := strings.IndexByte(raw[i:], '\\')
		if j < 0 {
			b.WriteString(raw[i:])
			break
		}
		b.WriteString(raw[i : i+j])
		i += j + 1 // the escaped byte, which the scan above found
		switch c := raw[i]; c {
		case '"', '\\', '/':
			b.WriteByte(c)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(raw[i+1:])
			if !ok {
				return "", false
			}
			i += 4
			// A high surrogate joins a low one that follows at once; any
			// other surrogate is written as U+FFFD (WriteRune does that).
			if 0xd800 <= r && r < 0xdc00 && strings.HasPrefix(raw[i+1:], `\u`) {
				if lo, ok := hex4(raw[i+3:]); ok && 0xdc00 <= lo && lo < 0xe000 {
					r = (r-0xd800)<<10 | (lo - 0xdc00) + 0x10000
					i += 6
				}
			}
			b.WriteRune(r)
		default:
			return "", false
		}
		i++
	}
	d.pos = end + 1
	return b.String(), true
}

// hex4 reads the four hex digits s starts with.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
