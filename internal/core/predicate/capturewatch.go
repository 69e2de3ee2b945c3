// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"cmp"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A capture whose path no call holds (capture: {url: args.urll}) never
// binds, so its predicate never holds, and every assertion over it passes
// untested; the tool's name being right, nothing says the path is wrong.
// CaptureWatch notes, over spans as they come, whether each capture path
// was present in some call of its predicate's tool, and the paths those
// calls did hold: what a "did you mean" compares the path with. The
// collector's typo watch and agentguard check share it.

// CaptureWatch is not safe for concurrent use.
type CaptureWatch struct {
	reader  *Set // only its JSON memo, to read calls as predicates do
	watched []watchedCapture
	paths   map[string]map[string]struct{} // by tool literal: the paths its calls held
}

type watchedCapture struct {
	predicate, from string
	tool            Literal
	glob            *regexp.Regexp // a glob tool name's
	result          bool
	path            string
	calls           int  // calls of the tool seen
	present         bool // in one of them at least
}

// maxPaths bounds the paths noted per tool; maxDepth how deep into a call's
// JSON they are read.
const (
	maxPaths = 200
	maxDepth = 4
)

// NewCaptureWatch watches the capture paths of the literals' capture
// predicates (Config.Literals); nil when there are none.
func NewCaptureWatch(literals map[string]Literal) *CaptureWatch {
	w := &CaptureWatch{paths: map[string]map[string]struct{}{}}
	for name, lit := range literals {
		for _, from := range lit.Captures {
			result, path, err := splitSource(from)
			if err != nil {
				continue // Validate refused the configuration already
			}
			c := watchedCapture{predicate: name, from: from, tool: lit, result: result, path: path}
			if IsGlob(lit.Name) {
				c.glob = regexp.MustCompile(`^` + globPattern(lit.Name, `.`) + `$`)
			}
			w.watched = append(w.watched, c)
		}
	}
	if len(w.watched) == 0 {
		return nil
	}
	memo, err := newJSONMemo()
	if err != nil {
		return nil // Compile fails on the same error first
	}
	w.reader = &Set{memo: memo}
	slices.SortFunc(w.watched, func(a, b watchedCapture) int {
		return cmp.Or(strings.Compare(a.predicate, b.predicate), strings.Compare(a.from, b.from))
	})
	return w
}

// Note reads a span: when it is a call of a watched tool (as Describe reads
// its tool), whether each capture path is there, and the paths it holds.
func (w *CaptureWatch) Note(span ptrace.Span) {
	if w == nil {
		return
	}
	ev := w.reader.newEvaluation(ptrace.ResourceSpans{}, ptrace.ScopeSpans{}, span)
	ev.facts.gather(span, false)
	tool, ok := ev.facts.toolOf()
	if !ok {
		return
	}
	noted := false
	for i := range w.watched {
		c := &w.watched[i]
		if !c.of(tool) {
			continue
		}
		c.calls++
		if v, ok := ev.call(c.result); ok && !c.present {
			_, c.present = lookupIn(v, c.result, c.path)
		}
		if !noted {
			noted = true
			w.notePaths(&ev, c.tool.Name)
		}
	}
}

// of: the tool is the capture's predicate's.
func (c *watchedCapture) of(tool string) bool {
	if c.glob != nil {
		return c.glob.MatchString(tool)
	}
	return c.tool.Name == tool
}

// notePaths adds the paths of a call's arguments and result.
func (w *CaptureWatch) notePaths(ev *evaluation, tool string) {
	seen := w.paths[tool]
	if seen == nil {
		seen = map[string]struct{}{}
		w.paths[tool] = seen
	}
	for _, result := range []bool{false, true} {
		head := "args"
		if result {
			head = "result"
		}
		if v, ok := ev.call(result); ok {
			addPaths(seen, head, v, 0)
		}
	}
}

func addPaths(seen map[string]struct{}, prefix string, v pcommon.Value, depth int) {
	if v.Type() != pcommon.ValueTypeMap || depth >= maxDepth {
		return
	}
	for k, x := range v.Map().All() {
		if len(seen) >= maxPaths {
			return
		}
		p := prefix + "." + k
		seen[p] = struct{}{}
		addPaths(seen, p, x, depth+1)
	}
}

// CaptureSuspect is a capture path absent from every call of its tool seen.
type CaptureSuspect struct {
	Predicate, From, Tool string
	Calls                 int      // of the tool, seen
	Seen                  []string // the paths those calls held, sorted
}

// Suspects are the capture paths absent from every call of their tool seen,
// by predicate then path; a tool never called is no suspect (its
// predicate's never holding says so).
func (w *CaptureWatch) Suspects() []CaptureSuspect {
	if w == nil {
		return nil
	}
	var out []CaptureSuspect
	for _, c := range w.watched {
		if c.calls == 0 || c.present {
			continue
		}
		seen := make([]string, 0, len(w.paths[c.tool.Name]))
		for p := range w.paths[c.tool.Name] {
			seen = append(seen, p)
		}
		sort.Strings(seen)
		out = append(out, CaptureSuspect{Predicate: c.predicate, From: c.from, Tool: c.tool.Name, Calls: c.calls, Seen: seen})
	}
	return out
}
