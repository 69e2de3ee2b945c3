// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"fmt"
	"strings"
)

// Record is a node of a verdict's trace tree (spec §4): a match of a
// sub-expression, or the termination of a sub-evaluation.
type Record struct {
	Label    string // the operator's label, or the predicate's name
	Start    int    // cycle the sub-evaluation started
	End      int    // cycle the match ended, or the sub-evaluation terminated
	Count    int    // match: its ordinal; termination: the number of matches
	Dict     Dict   // match: the dict it passes on; termination: the dict it started with
	Children []*Record
}

// label is how a node's records name it: the operator, repeat, inv, or the
// predicate (ok prints as __ok, as the reference prints it).
func label(e *Expr) string {
	switch e.Op {
	case OpPred:
		if e.Index < 0 {
			return "__ok"
		}
		return e.Name
	case OpRepeat:
		return "repeat"
	case OpNot:
		return "inv"
	case OpFirst, OpOnce:
		return e.Op.Symbol()
	}
	return e.Op.Symbol()
}

// Timestamps gives the timestamp of a cycle, for the (ST/ET) column.
type Timestamps func(cycle int) int64

// Format prints the tree one node a line, two spaces of indent a level, in the
// reference format: OP (S/E) (ST/ET) COUNT {DICT}.
func (r *Record) Format(ts Timestamps) string {
	var b strings.Builder
	r.FormatTo(&b, ts)
	return b.String()
}

// FormatTo is Format written into b, for a caller that builds a longer text.
func (r *Record) FormatTo(b *strings.Builder, ts Timestamps) { r.format(b, ts, 0) }

func (r *Record) format(b *strings.Builder, ts Timestamps, depth int) {
	fmt.Fprintf(b, "%s%s (%d/%d) (%d/%d) %d %s\n", strings.Repeat("  ", depth), r.Label,
		r.Start, r.End, ts(r.Start), ts(r.End), r.Count, r.Dict)
	for _, c := range r.Children {
		c.format(b, ts, depth+1)
	}
}
