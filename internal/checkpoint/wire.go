// SPDX-License-Identifier: Apache-2.0

// Package checkpoint is the wire format of the processors' checkpoints: the
// appenders that write a value and the Reader that reads it back, each read
// naming the field it reads, so that a truncated or corrupt checkpoint is
// refused with an error that says where, never with a panic or a huge
// allocation.
package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// AppendUvarint appends v.
func AppendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendVarint appends v.
func AppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendBytes appends p, length first.
func AppendBytes(b, p []byte) []byte { return append(binary.AppendUvarint(b, uint64(len(p))), p...) }

// AppendString appends s, length first.
func AppendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// AppendBool appends v as one byte.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// ErrTruncated is wrapped by every error of a read past the end.
var ErrTruncated = errors.New("truncated")

// Reader reads what the appenders wrote. The first error sticks: later
// reads return zero values, and Err reports the first.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first error, naming the field and the offset.
func (r *Reader) Err() error { return r.err }

// Len is the number of bytes not read yet.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Fail records err for field unless an error came first.
func (r *Reader) Fail(field string, err error) {
	if r.err == nil {
		r.err = fmt.Errorf("%s at byte %d: %w", field, r.off, err)
	}
}

// Uvarint reads an unsigned integer.
func (r *Reader) Uvarint(field string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.Fail(field, badVarint(n))
		return 0
	}
	r.off += n
	return v
}

// Varint reads a signed integer.
func (r *Reader) Varint(field string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.Fail(field, badVarint(n))
		return 0
	}
	r.off += n
	return v
}

func badVarint(n int) error {
	if n == 0 {
		return ErrTruncated
	}
	return errors.New("integer overflows 64 bits")
}

// Count reads a count of items each at least min bytes long: a count the
// bytes left cannot hold is refused before anything is allocated for it.
func (r *Reader) Count(field string, min int) int {
	v := r.Uvarint(field)
	if r.err == nil && v > uint64(r.Len()/max(min, 1)) {
		r.Fail(field, fmt.Errorf("%d items, but %d bytes left: %w", v, r.Len(), ErrTruncated))
		return 0
	}
	return int(v)
}

// Bytes reads a length-prefixed byte string; the result aliases the input.
func (r *Reader) Bytes(field string) []byte {
	n := r.Count(field, 1)
	return r.Fixed(field, n)
}

// String reads a length-prefixed string.
func (r *Reader) String(field string) string { return string(r.Bytes(field)) }

// Fixed reads n bytes; the result aliases the input.
func (r *Reader) Fixed(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.Len() {
		r.Fail(field, ErrTruncated)
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

// Bool reads one byte that must be 0 or 1.
func (r *Reader) Bool(field string) bool {
	p := r.Fixed(field, 1)
	if p == nil {
		return false
	}
	if p[0] > 1 {
		r.Fail(field, fmt.Errorf("want 0 or 1, got %d", p[0]))
		return false
	}
	return p[0] == 1
}

// End reports an error unless every byte was read.
func (r *Reader) End(field string) error {
	if r.err == nil && r.Len() != 0 {
		r.Fail(field, fmt.Errorf("%d bytes left over", r.Len()))
	}
	return r.err
}
