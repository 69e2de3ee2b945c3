// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
)

// The readers of PRISM's explicit files parse bytes in place: a line is a
// slice of the reader's buffer, numbers are parsed without a string or a
// field slice a line, and the transitions go straight into column arrays that
// become the chain's CSR arrays. At 10⁶ states and 8·10⁶ lines this is what
// keeps reading below solving (see BenchmarkReadTra).

// maxLine bounds a line, so that a file without newlines cannot ask for
// unbounded memory.
const maxLine = 16 << 20

// lines yields the non-blank lines of a file with their numbers; each line is
// valid until the next call.
type lines struct {
	r    *bufio.Reader
	name string
	line int
	long []byte // a line longer than the buffer, assembled
	err  error
}

func newLines(r io.Reader, name string) *lines {
	return &lines{r: bufio.NewReaderSize(r, 256<<10), name: name}
}

// next returns the next non-blank line without its surrounding blanks, false
// at the end of the file or on a read error (see end).
func (l *lines) next() ([]byte, bool) {
	for l.err == nil {
		b, err := l.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) && len(l.long) <= maxLine {
				b, err = l.r.ReadSlice('\n')
				l.long = append(l.long, b...)
			}
			if len(l.long) > maxLine {
				l.err = fmt.Errorf("%s:%d: line longer than %d bytes", l.name, l.line+1, maxLine)
				return nil, false
			}
			b = l.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			l.err = fmt.Errorf("%s: %w", l.name, err)
			return nil, false
		}
		if len(b) == 0 {
			l.err = io.EOF
			return nil, false
		}
		l.line++
		if b = trimBlanks(b); len(b) > 0 {
			return b, true
		}
	}
	return nil, false
}

// end is the read error that stopped next, nil at the end of the file.
func (l *lines) end() error {
	if errors.Is(l.err, io.EOF) {
		return nil
	}
	return l.err
}

func (l *lines) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", l.name, l.line, fmt.Sprintf(format, args...))
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func trimBlanks(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// field splits off the first blank-separated field of a trimmed line.
func field(b []byte) (f, rest []byte) {
	i := 0
	for i < len(b) && !isBlank(b[i]) {
		i++
	}
	f, rest = b[:i], b[i:]
	for len(rest) > 0 && isBlank(rest[0]) {
		rest = rest[1:]
	}
	return f, rest
}

// parseIndex reads a non-negative decimal integer below limit.
func parseIndex(b []byte, limit int) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, v < limit
}

// quoteLine quotes a line for a message, shortened if long.
func quoteLine(b []byte) string {
	if len(b) > 80 {
		return strconv.Quote(string(b[:77]) + "...")
	}
	return strconv.Quote(string(b))
}

// sizeOf is the number of bytes r will yield, when r knows it (a file, a
// bytes or strings reader), else -1.
func sizeOf(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case *os.File:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return -1
}

// minTraLine is the shortest transition line, "0 0 1\n": a file of size
// bytes holds at most size/minTraLine transitions, which bounds what a
// header may make the reader allocate up front.
const minTraLine = 6

// maxDeadlocks bounds the states without transitions a .tra file may have,
// so that a header cannot ask for an allocation the file does not back.
const maxDeadlocks = 1 << 16

// traEntries is the transitions of a .tra file in file order.
type traEntries struct {
	src, col []int32
	prob     []float64
	// runs map entries to lines: entry k is on line runs[j].line + k −
	// runs[j].entry for the last run with runs[j].entry ≤ k. A new run starts
	// after every blank line, so a file without blank lines has one.
	runs   []lineRun
	sorted bool // src never decreases
}

type lineRun struct{ entry, line int }

func (e *traEntries) lineOf(k int) int {
	j := sort.Search(len(e.runs), func(j int) bool { return e.runs[j].entry > k }) - 1
	return e.runs[j].line + k - e.runs[j].entry
}

// firstLine is the line of state s's first transition in the file.
func (e *traEntries) firstLine(s int32) int {
	return e.lineOf(slices.Index(e.src, s))
}

// ReadTra reads a PRISM explicit .tra file; name is used in messages. A
// state without transitions is a deadlock and becomes absorbing, as PRISM
// does, with a warning. An error names the line and the field: a malformed
// line, a state out of range, a probability that is not a number in [0, 1],
// a transition given twice, a row that does not sum to 1 within
// RowTolerance, a count that differs from the header's.
func ReadTra(r io.Reader, name string) (*Chain, []string, error) {
	l := newLines(r, name)
	header, ok := l.next()
	if !ok {
		if err := l.end(); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s: empty file, want a first line \"STATES TRANSITIONS\"", name)
	}
	n, count, err := parseTraHeader(header)
	if err != nil {
		return nil, nil, l.errorf("%v", err)
	}
	e, err := readTraEntries(l, n, count, sizeOf(r))
	if err != nil {
		return nil, nil, err
	}
	if len(e.col) != count {
		return nil, nil, fmt.Errorf("%s: the header announces %d transitions, the file has %d", name, count, len(e.col))
	}
	// Only now, with the transitions read, is n trusted with an allocation.
	if n > count+maxDeadlocks {
		return nil, nil, fmt.Errorf("%s: the header announces %d states for %d transitions: more than %d states without transitions", name, n, count, maxDeadlocks)
	}
	c, warnings, err := e.chain(name, n)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range c.Warnings() {
		warnings = append(warnings, name+": "+w)
	}
	return c, warnings, nil
}

func parseTraHeader(b []byte) (n, count int, err error) {
	f1, rest := field(b)
	f2, rest := field(rest)
	n, ok1 := parseIndex(f1, math.MaxInt32+1)
	count, ok2 := parseIndex(f2, math.MaxInt)
	if len(rest) > 0 || !ok1 || !ok2 || n < 1 {
		return 0, 0, fmt.Errorf("header %s: want \"STATES TRANSITIONS\", a number of states from 1 to %d and of transitions ≥ 0", quoteLine(b), math.MaxInt32)
	}
	return n, count, nil
}

// readTraEntries reads the transition lines. The arrays are sized from the
// header's count, but never beyond what the file's size can hold.
func readTraEntries(l *lines, n, count int, size int64) (*traEntries, error) {
	capacity := min(count, 1<<16)
	if size >= 0 {
		capacity = min(count, int(size/minTraLine)+1)
	}
	e := &traEntries{
		src:    make([]int32, 0, capacity),
		col:    make([]int32, 0, capacity),
		prob:   make([]float64, 0, capacity),
		sorted: true,
	}
	prev, lastLine := int32(0), -1
	for {
		b, ok := l.next()
		if !ok {
			return e, l.end()
		}
		if l.line != lastLine+1 {
			e.runs = append(e.runs, lineRun{len(e.col), l.line})
		}
		lastLine = l.line
		fs, rest := field(b)
		ft, rest := field(rest)
		fp, rest := field(rest)
		if len(fp) == 0 || len(rest) > 0 {
			return nil, l.errorf("%s: want three fields \"SRC DST PROB\"", quoteLine(b))
		}
		s, ok := parseIndex(fs, n)
		if !ok {
			return nil, l.errorf("field 1 (SRC) %q: want a state 0 to %d", fs, n-1)
		}
		t, ok := parseIndex(ft, n)
		if !ok {
			return nil, l.errorf("field 2 (DST) %q: want a state 0 to %d", ft, n-1)
		}
		// The conversion does not allocate: ParseFloat does not keep its
		// argument (it copies it into an error), so it stays on the stack.
		p, err := strconv.ParseFloat(string(fp), 64)
		if err != nil || !(p >= 0 && p <= 1) {
			return nil, l.errorf("field 3 (PROB) %q: want a number in [0, 1]", fp)
		}
		if int32(s) < prev {
			e.sorted = false
		}
		prev = int32(s)
		e.src = append(e.src, int32(s))
		e.col = append(e.col, int32(t))
		e.prob = append(e.prob, p)
	}
}

// chain builds the CSR arrays: in place when the file lists the states in
// order without deadlocks (as PRISM and WriteTra do), else by a counting sort
// that also gives each deadlock its self-loop. Then every row is sorted by
// successor and checked.
func (e *traEntries) chain(name string, n int) (*Chain, []string, error) {
	rowStart := make([]int, n+1)
	for _, s := range e.src {
		rowStart[s+1]++
	}
	var deadlocks []int32
	for s := range n {
		if rowStart[s+1] == 0 {
			deadlocks = append(deadlocks, int32(s))
			rowStart[s+1] = 1
		}
		rowStart[s+1] += rowStart[s]
	}
	col, prob := e.col, e.prob
	if !e.sorted || len(deadlocks) > 0 {
		col, prob = make([]int32, rowStart[n]), make([]float64, rowStart[n])
		fill := slices.Clone(rowStart[:n])
		for k, s := range e.src {
			col[fill[s]], prob[fill[s]] = e.col[k], e.prob[k]
			fill[s]++
		}
		for _, s := range deadlocks {
			col[rowStart[s]], prob[rowStart[s]] = s, 1
		}
	}
	var warnings []string
	for _, s := range deadlocks {
		warnings = append(warnings, fmt.Sprintf("%s: state %d has no transitions (a deadlock): made absorbing", name, s))
	}
	for s := range n {
		lo, hi := rowStart[s], rowStart[s+1]
		cols, probs := col[lo:hi], prob[lo:hi]
		sortRow(cols, probs)
		sum := probs[0]
		for i := 1; i < len(cols); i++ {
			if cols[i] == cols[i-1] {
				return nil, nil, fmt.Errorf("%s:%d: state %d: transition to %d given twice (the state's first transition is on this line)", name, e.firstLine(int32(s)), s, cols[i])
			}
			sum += probs[i]
		}
		if math.Abs(sum-1) > RowTolerance {
			return nil, nil, fmt.Errorf("%s:%d: state %d: probabilities sum to %.17g, want 1 (within %g) (the state's first transition is on this line)", name, e.firstLine(int32(s)), s, sum, RowTolerance)
		}
	}
	// Every row was checked as NewChain would: the arrays are the chain's.
	c := &Chain{rowStart: rowStart, col: col, prob: prob}
	c.buildPredecessors()
	return c, warnings, nil
}

// sortRow sorts a row by successor, moving the probabilities along; rows are
// short and usually sorted already.
func sortRow(cols []int32, probs []float64) {
	if slices.IsSorted(cols) {
		return
	}
	if len(cols) > 16 {
		sort.Sort(rowSorter{cols, probs})
		return
	}
	for i := 1; i < len(cols); i++ {
		for j := i; j > 0 && cols[j] < cols[j-1]; j-- {
			cols[j], cols[j-1] = cols[j-1], cols[j]
			probs[j], probs[j-1] = probs[j-1], probs[j]
		}
	}
}

type rowSorter struct {
	cols  []int32
	probs []float64
}

func (r rowSorter) Len() int           { return len(r.cols) }
func (r rowSorter) Less(i, j int) bool { return r.cols[i] < r.cols[j] }
func (r rowSorter) Swap(i, j int) {
	r.cols[i], r.cols[j] = r.cols[j], r.cols[i]
	r.probs[i], r.probs[j] = r.probs[j], r.probs[i]
}

// ReadLab reads a PRISM explicit .lab file for a chain of numStates states:
// a first line `0="init" 1="deadlock" …`, then "STATE: LABELINDEX …" lines.
// An error names the line and the field.
func ReadLab(r io.Reader, name string, numStates int) ([]Label, error) {
	l := newLines(r, name)
	header, ok := l.next()
	if !ok {
		if err := l.end(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: empty file, want a first line like 0=\"init\" 1=\"deadlock\"", name)
	}
	labels, err := parseLabHeader(header, numStates)
	if err != nil {
		return nil, l.errorf("%v", err)
	}
	for {
		b, ok := l.next()
		if !ok {
			return labels, l.end()
		}
		if err := parseLabLine(b, labels, numStates); err != nil {
			return nil, l.errorf("%v", err)
		}
	}
}

func parseLabHeader(b []byte, numStates int) ([]Label, error) {
	var labels []Label
	for rest := b; len(rest) > 0; {
		var decl []byte
		decl, rest = field(rest)
		idx, quoted, ok := bytes.Cut(decl, []byte("="))
		i, okIdx := parseIndex(idx, math.MaxInt32)
		if !ok || !okIdx || len(quoted) == 0 || quoted[0] != '"' {
			return nil, fmt.Errorf("label declaration %q (field %d): want INDEX=\"NAME\"", decl, len(labels)+1)
		}
		lname, err := strconv.Unquote(string(quoted))
		if err != nil {
			return nil, fmt.Errorf("label declaration %q (field %d): want INDEX=\"NAME\"", decl, len(labels)+1)
		}
		if !isIdentifier(lname) {
			return nil, fmt.Errorf("label declaration %q (field %d): the name must be an identifier (letters, digits, _, not starting with a digit), as PRISM's labels are", decl, len(labels)+1)
		}
		if i != len(labels) {
			return nil, fmt.Errorf("label declaration %q (field %d): want index %d (labels are numbered 0, 1, … in order)", decl, len(labels)+1, len(labels))
		}
		if _, dup := FindLabel(labels, lname); dup {
			return nil, fmt.Errorf("label %q declared twice (field %d)", lname, len(labels)+1)
		}
		labels = append(labels, Label{Name: lname, States: make([]bool, numStates)})
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("no label declarations in %s", quoteLine(b))
	}
	return labels, nil
}

func parseLabLine(b []byte, labels []Label, numStates int) error {
	head, rest, ok := bytes.Cut(b, []byte(":"))
	head = trimBlanks(head)
	s, okState := parseIndex(head, numStates)
	if !ok || !okState {
		return fmt.Errorf("%s: want \"STATE: LABELINDEX …\" with a state 0 to %d (field 1 is %q)", quoteLine(b), numStates-1, head)
	}
	rest = trimBlanks(rest)
	for i := 2; len(rest) > 0; i++ {
		var f []byte
		f, rest = field(rest)
		k, ok := parseIndex(f, len(labels))
		if !ok {
			return fmt.Errorf("state %d: field %d: unknown label index %q (declared 0 to %d)", s, i, f, len(labels)-1)
		}
		labels[k].States[s] = true
	}
	return nil
}
