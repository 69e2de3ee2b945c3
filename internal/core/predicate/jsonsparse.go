// SPDX-License-Identifier: Apache-2.0

package predicate

// A compiled condition (ottlcompile.go) reads a few fields of a JSON text,
// ParseJSON(...)["a"]["b"]: the sparse scan below reads the text once for
// all of them, keeping only the values at those keys, and builds nothing
// else. It walks the text with jsonDecoder's primitives, so that it accepts
// exactly what decodeJSON accepts, where ParseJSON gives the same values;
// it declines the rest (too deep, not an object at the top, an error), and
// the condition then runs as OTTL.

// jsonKind is what a slot holds. The scalars are the types OTTL gives a
// value read from ParseJSON's result or from an attribute.
type jsonKind uint8

const (
	// jsonAbsent: no such key (OTTL's index fails on it) or not read yet.
	jsonAbsent jsonKind = iota
	// jsonUnsure: a value the compiled form does not compare (an object, an
	// array, bytes): the condition runs as OTTL.
	jsonUnsure
	jsonNull
	jsonBool
	jsonInt
	jsonFloat
	jsonStr
)

// scalar is one value a compiled condition compares.
type scalar struct {
	kind jsonKind
	b    bool
	i    int64
	f    float64
	s    string
}

// keyNode is a key read in an object, and the keys read below it.
type keyNode struct {
	key  string
	slot int // the slot its value fills; -1 where only deeper keys are read
	kids []*keyNode
}

func findKey(nodes []*keyNode, key string) *keyNode {
	for _, n := range nodes {
		if n.key == key {
			return n
		}
	}
	return nil
}

// clear marks every slot below n absent: a duplicate key's last value is
// the one ParseJSON keeps, whole.
func (n *keyNode) clear(slots []scalar) {
	if n.slot >= 0 {
		slots[n.slot] = scalar{}
	}
	for _, k := range n.kids {
		k.clear(slots)
	}
}

// sparseObject reads the object text holds at its top into slots, at the
// keys of nodes; false where it declines (the slots are then not to be
// read).
func sparseObject(text string, nodes []*keyNode, slots []scalar) bool {
	d := jsonDecoder{text: text}
	d.space()
	if d.peek() != '{' || !d.sparse(nodes, slots) {
		return false
	}
	d.space()
	return d.pos == len(text)
}

// sparse reads an object from its '{' on, keeping the values at nodes.
func (d *jsonDecoder) sparse(nodes []*keyNode, slots []scalar) bool {
	return d.members(0, nil, func(key string) bool { return d.member(findKey(nodes, key), slots) })
}

// member reads the value of one member, kept where n (nil: not read) asks.
func (d *jsonDecoder) member(n *keyNode, slots []scalar) bool {
	if n == nil {
		return d.skip()
	}
	n.clear(slots)
	if d.peek() == '{' && len(n.kids) > 0 {
		if n.slot >= 0 {
			slots[n.slot] = scalar{kind: jsonUnsure}
		}
		return d.sparse(n.kids, slots)
	}
	if n.slot < 0 {
		return d.skip() // deeper keys of a value that has none: absent
	}
	return d.scalar(&slots[n.slot])
}

// scalar reads one value into v; a container is skipped and unsure.
func (d *jsonDecoder) scalar(v *scalar) bool {
	switch d.peek() {
	case '{', '[':
		*v = scalar{kind: jsonUnsure}
		return d.skip()
	case '"':
		s, ok := d.str()
		*v = scalar{kind: jsonStr, s: s}
		return ok
	case 't':
		*v = scalar{kind: jsonBool, b: true}
		return d.literal("true")
	case 'f':
		*v = scalar{kind: jsonBool}
		return d.literal("false")
	case 'n':
		*v = scalar{kind: jsonNull}
		return d.literal("null")
	}
	f, ok := d.number()
	*v = scalar{kind: jsonFloat, f: f}
	return ok
}

// skip reads a value and keeps nothing of it.
func (d *jsonDecoder) skip() bool {
	switch d.peek() {
	case '{':
		return d.sparse(nil, nil)
	case '[':
		return d.skipArray()
	case '"':
		return d.skipStr()
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	_, ok := d.number()
	return ok
}

func (d *jsonDecoder) skipArray() bool { return d.elements(nil, d.skip) }

// skipStr checks a string as str does, without decoding it.
func (d *jsonDecoder) skipStr() bool {
	text := d.text
	for i := plainEnd(text, d.pos+1); i < len(text); i = plainEnd(text, i) {
		switch c := text[i]; {
		case c == '"':
			d.pos = i + 1
			return true
		case c < 0x20:
			return false
		}
		// An escape.
		if i++; i >= len(text) {
			return false
		}
		switch text[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if _, ok := hex4(text[i+1:]); !ok {
				return false
			}
			i += 5
		default:
			return false
		}
	}
	return false
}
