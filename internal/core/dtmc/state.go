// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"
	"math/bits"
	"strings"
)

// MaxPredicates is the number of predicates an abstract state holds; the
// top bit of a State marks End.
const MaxPredicates = 63

// State is an abstract state: bit i is the value of predicate i, or End.
type State uint64

// End is the absorbing state every trace ends in.
const End State = 1 << 63

// EndName is End's name in files and reports.
const EndName = "end"

// Name is the state's bit string in declaration order ("01" = first
// predicate false, second true), or "end".
func (s State) Name(n int) string {
	if s == End {
		return EndName
	}
	var b strings.Builder
	for i := range n {
		b.WriteByte('0' + byte(s>>uint(i)&1))
	}
	return b.String()
}

// ParseState reads a state name over n predicates.
func ParseState(name string, n int) (State, error) {
	if name == EndName {
		return End, nil
	}
	if len(name) != n || strings.Trim(name, "01") != "" {
		return 0, fmt.Errorf("state %q: want %q or %d bits (0 or 1), one per predicate", name, EndName, n)
	}
	var s State
	for i := range n {
		if name[i] == '1' {
			s |= 1 << uint(i)
		}
	}
	return s, nil
}

// StateOf builds a state from one value per predicate.
func StateOf(values []bool) State {
	var s State
	for i, v := range values {
		if v {
			s |= 1 << uint(i)
		}
	}
	return s
}

// changes is the number of predicates that differ between two valuations.
func changes(s, t State) int { return bits.OnesCount64(uint64(s ^ t)) }

// lessByName orders states as their names sort: by the first predicate,
// then the second, ..., End last. This makes indices reproducible and
// numbers the stove's states as the paper does.
func lessByName(a, b State) bool {
	if a == End || b == End {
		return b == End && a != End
	}
	return bits.Reverse64(uint64(a)) < bits.Reverse64(uint64(b))
}
