package dtmc

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
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

// lineReader reads numbered lines for error messages "FILE:LINE: …".
type lineReader struct {
	sc   *bufio.Scanner
	name string
	line int
}

func newLineReader(r io.Reader, name string) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	return &lineReader{sc: sc, name: name}
}

// next returns the next non-blank line, false at the end.
func (lr *lineReader) next() (string, bool) {
	for lr.sc.Scan() {
		lr.line++
		if text := strings.TrimSpace(lr.sc.Text()); text != "" {
			return text, true
		}
	}
	return "", false
}

func (lr *lineReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", lr.name, lr.line, fmt.Sprintf(format, args...))
}

func (lr *lineReader) end() error {
	if err := lr.sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", lr.name, err)
	}
	return nil
}

// maxDeadlocks bounds the states without transitions a .tra file may have,
// so that a header cannot ask for an allocation the file does not back.
const maxDeadlocks = 1 << 16

// ReadTra reads a PRISM explicit .tra file; name is used in messages. A
// state without transitions is a deadlock and becomes absorbing, as PRISM
// does, with a warning; a row that does not sum to 1 within RowTolerance, a
// negative, NaN or infinite probability, a state out of range or a repeated
// transition is an error naming the line.
func ReadTra(r io.Reader, name string) (c *Chain, warnings []string, err error) {
	lr := newLineReader(r, name)
	header, ok := lr.next()
	if !ok {
		if err := lr.end(); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s: empty file, want a first line \"STATES TRANSITIONS\"", name)
	}
	n, count, err := parseTraHeader(header)
	if err != nil {
		return nil, nil, lr.errorf("%v", err)
	}
	entries, err := readTraEntries(lr, n)
	if err != nil {
		return nil, nil, err
	}
	if len(entries) != count {
		return nil, nil, fmt.Errorf("%s: the header announces %d transitions, the file has %d", name, count, len(entries))
	}
	// Only now, with the transitions read, is n trusted with an allocation.
	if n > count+maxDeadlocks {
		return nil, nil, fmt.Errorf("%s: the header announces %d states for %d transitions: more than %d states without transitions", name, n, count, maxDeadlocks)
	}
	rows, warnings, err := traRows(name, n, entries)
	if err != nil {
		return nil, nil, err
	}
	if c, err = FromRows(rows); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, w := range c.Warnings() {
		warnings = append(warnings, name+": "+w)
	}
	return c, warnings, nil
}

// traEntry is one transition line.
type traEntry struct {
	from int
	tr   Transition
	line int
}

func readTraEntries(lr *lineReader, n int) ([]traEntry, error) {
	var entries []traEntry
	for {
		text, ok := lr.next()
		if !ok {
			return entries, lr.end()
		}
		s, tr, err := parseTraLine(text, n)
		if err != nil {
			return nil, lr.errorf("%v", err)
		}
		entries = append(entries, traEntry{s, tr, lr.line})
	}
}

// traRows groups the entries by state, makes deadlocks absorbing, and checks
// that no transition repeats and that every row sums to 1.
func traRows(name string, n int, entries []traEntry) ([][]Transition, []string, error) {
	rows := make([][]Transition, n)
	firstLine := make([]int, n)
	for _, e := range entries {
		if firstLine[e.from] == 0 {
			firstLine[e.from] = e.line
		}
		rows[e.from] = append(rows[e.from], e.tr)
	}
	var warnings []string
	for s, row := range rows {
		if len(row) == 0 {
			rows[s] = []Transition{{s, 1}}
			warnings = append(warnings, fmt.Sprintf("%s: state %d has no transitions (a deadlock): made absorbing", name, s))
			continue
		}
		sort.Slice(row, func(i, j int) bool { return row[i].To < row[j].To })
		sum := row[0].Prob
		for i := 1; i < len(row); i++ {
			if row[i].To == row[i-1].To {
				return nil, nil, fmt.Errorf("%s: state %d: transition to %d given twice", name, s, row[i].To)
			}
			sum += row[i].Prob
		}
		if math.Abs(sum-1) > RowTolerance {
			return nil, nil, fmt.Errorf("%s:%d: state %d: probabilities sum to %.17g, want 1 (within %g)", name, firstLine[s], s, sum, RowTolerance)
		}
	}
	return rows, warnings, nil
}

func parseTraHeader(text string) (n, count int, err error) {
	f := strings.Fields(text)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("header %q: want \"STATES TRANSITIONS\"", text)
	}
	n, err1 := strconv.Atoi(f[0])
	count, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || n < 1 || count < 0 || n > math.MaxInt32 {
		return 0, 0, fmt.Errorf("header %q: want a number of states ≥ 1 and of transitions ≥ 0", text)
	}
	return n, count, nil
}

func parseTraLine(text string, n int) (int, Transition, error) {
	f := strings.Fields(text)
	if len(f) != 3 {
		return 0, Transition{}, fmt.Errorf("%q: want \"SRC DST PROB\"", text)
	}
	s, err1 := strconv.Atoi(f[0])
	t, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || s < 0 || s >= n || t < 0 || t >= n {
		return 0, Transition{}, fmt.Errorf("%q: unknown state: states are 0 to %d", text, n-1)
	}
	p, err := strconv.ParseFloat(f[2], 64)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > 1 {
		return 0, Transition{}, fmt.Errorf("probability %q: want a number in [0, 1]", f[2])
	}
	return s, Transition{t, p}, nil
}

// ReadLab reads a PRISM explicit .lab file for a chain of numStates states.
func ReadLab(r io.Reader, name string, numStates int) ([]Label, error) {
	lr := newLineReader(r, name)
	header, ok := lr.next()
	if !ok {
		if err := lr.end(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: empty file, want a first line like 0=\"init\" 1=\"deadlock\"", name)
	}
	labels, err := parseLabHeader(header, numStates)
	if err != nil {
		return nil, lr.errorf("%v", err)
	}
	for {
		text, ok := lr.next()
		if !ok {
			break
		}
		if err := parseLabLine(text, labels, numStates); err != nil {
			return nil, lr.errorf("%v", err)
		}
	}
	return labels, lr.end()
}

func parseLabHeader(text string, numStates int) ([]Label, error) {
	var labels []Label
	for _, decl := range strings.Fields(text) {
		idx, quoted, ok := strings.Cut(decl, "=")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil {
			return nil, fmt.Errorf("label declaration %q: want INDEX=\"NAME\"", decl)
		}
		lname, err := strconv.Unquote(quoted)
		if err != nil || !strings.HasPrefix(quoted, `"`) {
			return nil, fmt.Errorf("label declaration %q: want INDEX=\"NAME\"", decl)
		}
		if !isIdentifier(lname) {
			return nil, fmt.Errorf("label declaration %q: the name must be an identifier (letters, digits, _, not starting with a digit), as PRISM's labels are", decl)
		}
		if i != len(labels) {
			return nil, fmt.Errorf("label declaration %q: want index %d (labels are numbered 0, 1, … in order)", decl, len(labels))
		}
		if _, dup := FindLabel(labels, lname); dup {
			return nil, fmt.Errorf("label %q declared twice", lname)
		}
		labels = append(labels, Label{Name: lname, States: make([]bool, numStates)})
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("no label declarations in %q", text)
	}
	return labels, nil
}

func parseLabLine(text string, labels []Label, numStates int) error {
	head, rest, ok := strings.Cut(text, ":")
	s, err := strconv.Atoi(strings.TrimSpace(head))
	if !ok || err != nil || s < 0 || s >= numStates {
		return fmt.Errorf("%q: want \"STATE: LABELINDEX …\" with a state 0 to %d", text, numStates-1)
	}
	for _, f := range strings.Fields(rest) {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= len(labels) {
			return fmt.Errorf("state %d: unknown label index %q (declared 0 to %d)", s, f, len(labels)-1)
		}
		labels[i].States[s] = true
	}
	return nil
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
