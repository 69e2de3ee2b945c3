// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Label is a named set of states, as in a PRISM .lab file.
type Label struct {
	Name   string
	States []bool
}

// FindLabel returns the label with the name, false if there is none.
func FindLabel(labels []Label, name string) (Label, bool) {
	for _, l := range labels {
		if l.Name == name {
			return l, true
		}
	}
	return Label{}, false
}

// LabelNames lists the names, for error messages.
func LabelNames(labels []Label) string {
	names := make([]string, len(labels))
	for i, l := range labels {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// WriteTra writes the chain in PRISM's explicit transition format: a line
// "STATES TRANSITIONS", then "SRC DST PROB" lines with probabilities that
// read back to the same float64.
func WriteTra(w io.Writer, c *Chain) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d %d\n", c.NumStates(), c.NumTransitions())
	var buf []byte
	for s := range c.NumStates() {
		cols, probs := c.Row(s)
		for i, t := range cols {
			buf = strconv.AppendInt(buf[:0], int64(s), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(t), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, probs[i], 'g', -1, 64)
			buf = append(buf, '\n')
			bw.Write(buf)
		}
	}
	return bw.Flush()
}

// WriteLab writes labels in PRISM's explicit format: a line
// `0="init" 1="deadlock" …`, then "STATE: LABELINDEX …" for every state
// with a label.
func WriteLab(w io.Writer, labels []Label, numStates int) error {
	bw := bufio.NewWriter(w)
	for i, l := range labels {
		if i > 0 {
			bw.WriteByte(' ')
		}
		fmt.Fprintf(bw, "%d=%q", i, l.Name)
	}
	bw.WriteByte('\n')
	for s := range numStates {
		first := true
		for i, l := range labels {
			if !l.States[s] {
				continue
			}
			if first {
				fmt.Fprintf(bw, "%d:", s)
				first = false
			}
			fmt.Fprintf(bw, " %d", i)
		}
		if !first {
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// WritePRISM writes the chain in the PRISM language: one module with a
// variable s : [0..N−1] and one command a state, and the labels (PRISM's
// built-in "init" and "deadlock" are left out), so that PRISM can check a
// learned model, e.g. P=? [ F "unsafe" ]. comments, one a state if not nil,
// are written beside the commands.
func WritePRISM(w io.Writer, c *Chain, init int, labels []Label, comments []string) error {
	bw := bufio.NewWriter(w)
	n := c.NumStates()
	fmt.Fprintf(bw, "dtmc\n\nmodule chain\n\ts : [0..%d] init %d;\n\n", n-1, init)
	for s := range n {
		if comments != nil {
			fmt.Fprintf(bw, "\t// %s\n", comments[s])
		}
		fmt.Fprintf(bw, "\t[] s=%d -> ", s)
		cols, probs := c.Row(s)
		for i, t := range cols {
			if i > 0 {
				bw.WriteString(" + ")
			}
			fmt.Fprintf(bw, "%s : (s'=%d)", strconv.FormatFloat(probs[i], 'g', -1, 64), t)
		}
		bw.WriteString(";\n")
	}
	bw.WriteString("endmodule\n")
	for _, l := range labels {
		if l.Name == "init" || l.Name == "deadlock" {
			continue
		}
		fmt.Fprintf(bw, "\nlabel %q = %s;", l.Name, prismStateSet(l.States))
	}
	if len(labels) > 0 {
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func prismStateSet(states []bool) string {
	var parts []string
	for s, in := range states {
		if in {
			parts = append(parts, fmt.Sprintf("s=%d", s))
		}
	}
	if len(parts) == 0 {
		return "false"
	}
	return strings.Join(parts, " | ")
}

// isIdentifier reports whether s is a PRISM identifier: what a label name
// must be, and what makes a .lab file, split on spaces, read back the same.
func isIdentifier(s string) bool {
	for i, r := range s {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}
