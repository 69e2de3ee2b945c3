// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/pattern"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/processor/temporalcheck"
)

const mineSynopsis = "--config COLLECTOR.yaml [--processor temporalcheck/NAME] [--against BAD_TRACES...] [--min-support N] [--max-k K] [--name temporalcheck/mined] [--out FILE] GOOD_TRACES..."

const mineHelp = `Proposes the assertions of the pattern library (docs/patterns.md) that hold on every group of
the good traces, over the predicates the configuration's temporalcheck processor declares plus
one per tool called (tool_NAME) and per agent transferred to (to_AGENT) in them, with the
tightest parameters the runs allow and their support (the groups in which each was exercised),
minus those implied by others. It writes them, with the predicates, as a temporalcheck processor
block ready to paste into the collector configuration (or to give to agentguard check --config).
With --against BAD_TRACES... it also says which proposed assertions each bad group violates.

Exit status: 0 done; 1 --against and a bad group that no proposed assertion flags; 2 a usage or
input error.

`

// mineOptions are mine's flags.
type mineOptions struct {
	config, processor, name, out string
	minSupport, maxK             int
	good, bad                    []string
}

func runMine(args []string, stdout, stderr io.Writer) int {
	args, bad, err := splitAgainst(args)
	fs := newFlagSet("mine", mineSynopsis, stderr)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(stderr, "\n"+mineHelp)
	}
	o := mineOptions{bad: bad}
	fs.StringVar(&o.config, "config", "", "the collector configuration `file` whose temporalcheck processor declares the predicates")
	fs.StringVar(&o.processor, "processor", "", "which temporalcheck processor, e.g. temporalcheck/agents (default: the only one)")
	fs.StringVar(&o.name, "name", "temporalcheck/mined", "the processor `id` of the block written")
	fs.StringVar(&o.out, "out", "", "write the block to this `file` (default: stdout)")
	fs.IntVar(&o.minSupport, "min-support", 1, "propose only assertions exercised in at least this many good groups")
	fs.IntVar(&o.maxK, "max-k", 10, "the largest k of response and handoff_returns")
	fs.Var(againstFlag{&o.bad}, "against", "bad trace `files` (all the arguments after it): report which proposed assertions they violate")
	if err != nil {
		fmt.Fprintln(stderr, "agentguard mine:", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.good = fs.Args()
	rep, err := mine(o)
	if err != nil {
		fmt.Fprintln(stderr, "agentguard mine:", err)
		return 2
	}
	out := stdout
	if o.out != "" {
		if err := os.WriteFile(o.out, rep.yaml, 0o644); err != nil {
			fmt.Fprintln(stderr, "agentguard mine:", err)
			return 2
		}
	} else {
		_, _ = out.Write(rep.yaml)
	}
	rep.print(stderr)
	if len(o.bad) > 0 && rep.unflagged > 0 {
		return 1
	}
	return 0
}

// splitAgainst takes --against and the file arguments after it (up to the
// next flag) out of args: the flag package takes one value a flag.
func splitAgainst(args []string) (rest, bad []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), bad, nil
		}
		if a != "--against" && a != "-against" {
			rest = append(rest, a)
			continue
		}
		n := len(bad)
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			bad = append(bad, args[i])
		}
		if len(bad) == n {
			return nil, nil, errors.New("--against: give the bad trace files after it")
		}
	}
	return rest, bad, nil
}

// againstFlag takes --against=FILE.
type againstFlag struct{ files *[]string }

func (f againstFlag) String() string {
	if f.files == nil {
		return ""
	}
	return strings.Join(*f.files, " ")
}

func (f againstFlag) Set(s string) error {
	*f.files = append(*f.files, s)
	return nil
}

// mineReport is what mine found, and the block it writes.
type mineReport struct {
	yaml            []byte
	groups, events  int
	files           int
	auto            []string // the predicates declared for mining, kept
	mined           pattern.MineResult
	bad             []badGroup
	badFiles        int
	unflagged       int
	ottlErrors      int
	droppedAuto     []string // auto predicates beyond the bit budget
	namesByAssert   []string
	flagsByAssert   []int
	groupBy         string
	processorID     string
	outputProcessor string
}

// badGroup is what the proposed assertions say of one bad group.
type badGroup struct {
	key        string
	events     int
	violations map[string]int // assertion name: violations
}

func mine(o mineOptions) (*mineReport, error) {
	switch {
	case o.config == "":
		return nil, errors.New("--config is required")
	case len(o.good) == 0:
		return nil, errors.New("no good trace files given")
	case o.minSupport < 1:
		return nil, fmt.Errorf("--min-support %d: want at least 1", o.minSupport)
	case o.maxK < 1 || o.maxK > pattern.MaxCount:
		return nil, fmt.Errorf("--max-k %d: want 1..%d", o.maxK, pattern.MaxCount)
	}
	var outID component.ID
	if err := outID.UnmarshalText([]byte(o.name)); err != nil || outID.Type() != temporalcheck.NewFactory().Type() {
		return nil, fmt.Errorf("--name %q: want temporalcheck or temporalcheck/NAME", o.name)
	}
	f := temporalcheck.NewFactory()
	id, raw, err := unmarshalProcessor(o.config, o.processor, f)
	if err != nil {
		return nil, err
	}
	cfg := raw.(*temporalcheck.Config)
	if err := cfg.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%s: processors::%s: %w", o.config, id, err)
	}
	if cfg.GroupBy == "" {
		return nil, fmt.Errorf("%s: processors::%s: group_by: must be \"trace_id\" or an attribute key", o.config, id)
	}
	rep := &mineReport{files: len(o.good), badFiles: len(o.bad), groupBy: cfg.GroupBy, processorID: id.String(), outputProcessor: o.name}

	// The tools and agents the good runs show, most frequent first.
	declared := cfg.Config
	first, err := readEventGroups(id, declared, cfg.GroupBy, o.good, rep)
	if err != nil {
		return nil, err
	}
	if rep.events == 0 {
		return nil, fmt.Errorf("no events in the good traces: the events condition selected none of their spans")
	}
	autos := discover(first, declared.Predicates)
	extended, kept := withAutos(declared, autos)
	for _, a := range autos[kept:] {
		rep.droppedAuto = append(rep.droppedAuto, a.Name)
	}
	rep.events, rep.ottlErrors = 0, 0
	groups, err := readEventGroups(id, extended, cfg.GroupBy, o.good, rep)
	if err != nil {
		return nil, err
	}
	final, keep := dedupe(extended, len(declared.Predicates), groups)
	for _, p := range final.Predicates[len(declared.Predicates):] {
		rep.auto = append(rep.auto, p.Name)
	}
	bits := remap(groups, keep)
	rep.groups = len(bits)
	res, err := pattern.Mine(roles(final.Predicates), bits, pattern.MineOptions{MaxK: o.maxK, MinSupport: o.minSupport})
	if err != nil {
		return nil, err
	}
	rep.mined = res
	rep.namesByAssert = assertionNames(res.Mined)
	rep.flagsByAssert = make([]int, len(res.Mined))
	if len(o.bad) > 0 {
		if err := rep.against(id, final, cfg.GroupBy, o.bad); err != nil {
			return nil, err
		}
	}
	y, err := rep.block(o.config, id, final)
	if err != nil {
		return nil, err
	}
	rep.yaml = y
	return rep, nil
}

// readEventGroups reads trace files into their groups' events as the
// processor sequences them.
func readEventGroups(id component.ID, pc predicate.Config, groupBy string, files []string, rep *mineReport) ([]events.Group, error) {
	ts := offlineSettings(id, io.Discard).TelemetrySettings
	ts.Logger = zap.NewNop() // OTTL errors are counted and reported once
	src, err := events.NewSource(pc, groupBy, ts)
	if err != nil {
		return nil, fmt.Errorf("processors::%s: %w", id, err)
	}
	tds, err := readTraceFiles(files)
	if err != nil {
		return nil, err
	}
	groups, errs := src.Groups(tds)
	rep.ottlErrors += errs.Count
	for _, g := range groups {
		rep.events += len(g.Events)
	}
	return groups, nil
}

// autoPredicate is a predicate declared for mining: a tool or an agent the
// good runs show, and how many events it was seen at.
type autoPredicate struct {
	predicate.Named
	seen int
}

// discover lists a predicate per tool called and per agent transferred to
// at the events, named tool_NAME and to_AGENT, most frequent first. What an
// event was is read as the shorthands read it (predicate.Describe); failed
// transfers moved no control and make none.
func discover(groups []events.Group, declared predicate.List) []autoPredicate {
	seen := map[string]*autoPredicate{}
	var order []*autoPredicate
	taken := map[string]bool{}
	for _, p := range declared {
		taken[p.Name] = true
	}
	add := func(key, name string, p predicate.Predicate) {
		a := seen[key]
		if a == nil {
			for base, i := name, 2; taken[name]; i++ {
				name = fmt.Sprintf("%s_%d", base, i)
			}
			taken[name] = true
			a = &autoPredicate{Named: predicate.Named{Name: name, Predicate: p}}
			seen[key] = a
			order = append(order, a)
		}
		a.seen++
	}
	for _, g := range groups {
		for _, ev := range g.Events {
			what := predicate.Describe(ev.Span)
			failed := strings.HasSuffix(what, " (failed)")
			what = strings.TrimSuffix(what, " (failed)")
			if tool, ok := strings.CutPrefix(what, "tool "); ok {
				add("tool "+tool, "tool_"+identifier(tool), predicate.Predicate{Tool: tool})
				continue
			}
			for _, kind := range []string{"transfer to ", "handoff to ", "delegation to "} {
				if to, ok := strings.CutPrefix(what, kind); ok && !failed {
					add("to "+to, "to_"+identifier(to), predicate.Predicate{TransferTo: to})
				}
			}
		}
	}
	slices.SortStableFunc(order, func(a, b *autoPredicate) int { return cmp.Compare(b.seen, a.seen) })
	out := make([]autoPredicate, len(order))
	for i, a := range order {
		out[i] = *a
	}
	return out
}

// identifier makes a tool or agent name a predicate name: letters, digits
// and _, not starting with a digit.
func identifier(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || (c >= '0' && c <= '9')) {
			b[i] = '_'
		}
	}
	return string(b)
}

// withAutos adds as many auto predicates (most frequent first) as the
// predicate bits allow; kept is how many.
func withAutos(declared predicate.Config, autos []autoPredicate) (predicate.Config, int) {
	for n := len(autos); n >= 0; n-- {
		c := declared
		c.Predicates = slices.Clone(declared.Predicates)
		for _, a := range autos[:n] {
			c.Predicates = append(c.Predicates, a.Named)
		}
		if len(c.Predicates) <= texpr.MaxPredicates && c.Validate() == nil {
			return c, n
		}
	}
	return declared, 0
}

// dedupe drops every auto predicate (those from index declared on) that
// holds at exactly the events where a predicate before it holds: a
// declared one says the same under the user's own name. keep lists the old
// bit of each predicate kept, in order.
func dedupe(c predicate.Config, declared int, groups []events.Group) (predicate.Config, []int) {
	column := func(i int) string {
		var b strings.Builder
		for _, g := range groups {
			for _, ev := range g.Events {
				b.WriteByte('0' + byte(ev.Bits>>uint(i)&1))
			}
			b.WriteByte('|')
		}
		return b.String()
	}
	seen := map[string]bool{}
	var keep []int
	out := c
	out.Predicates = nil
	for i, p := range c.Predicates {
		col := column(i)
		if i >= declared && seen[col] {
			continue
		}
		seen[col] = true
		keep = append(keep, i)
		out.Predicates = append(out.Predicates, p)
	}
	return out, keep
}

// remap moves each event's bits to the kept predicates' new positions.
func remap(groups []events.Group, keep []int) [][]uint64 {
	out := make([][]uint64, len(groups))
	for g, grp := range groups {
		out[g] = make([]uint64, len(grp.Events))
		for c, ev := range grp.Events {
			for to, from := range keep {
				out[g][c] |= (ev.Bits >> uint(from) & 1) << uint(to)
			}
		}
	}
	return out
}

func roles(list predicate.List) []pattern.MinePredicate {
	out := make([]pattern.MinePredicate, len(list))
	for i, p := range list {
		out[i].Name = p.Name
		switch {
		case p.Tool != "":
			out[i].Role = pattern.ToolRole
		case p.TransferTo != "" || p.Agent != "":
			out[i].Role = pattern.ControlRole
		}
	}
	return out
}

// assertionNames names each mined assertion after its pattern and event
// parameters: response_xferToGreeting_sayHello.
func assertionNames(mined []pattern.Mined) []string {
	taken := map[string]bool{}
	out := make([]string, len(mined))
	for i, m := range mined {
		parts := []string{m.Pattern.Name}
		for _, a := range m.Pattern.Args {
			if a.Events != nil && (m.Pattern.Name != "handoff_returns" || a.Name == "to") {
				parts = append(parts, strings.Join(a.Events, "_or_"))
			}
		}
		name := strings.Join(parts, "_")
		for base, n := name, 2; taken[name]; n++ {
			name = fmt.Sprintf("%s_%d", base, n)
		}
		taken[name] = true
		out[i] = name
	}
	return out
}

func (r *mineReport) configs() []assertion.Config {
	out := make([]assertion.Config, len(r.mined.Mined))
	for i, m := range r.mined.Mined {
		out[i] = assertion.Config{Name: r.namesByAssert[i], Pattern: map[string]any{m.Pattern.Name: m.Params}}
	}
	return out
}

// against runs the proposed assertions over the bad runs, group by group.
func (r *mineReport) against(id component.ID, pc predicate.Config, groupBy string, files []string) error {
	names := make([]string, len(pc.Predicates))
	for i, p := range pc.Predicates {
		names[i] = p.Name
	}
	compiled, err := assertion.Compile(r.configs(), names, 0)
	if err != nil {
		return err
	}
	scratch := &mineReport{}
	groups, err := readEventGroups(id, pc, groupBy, files, scratch)
	if err != nil {
		return err
	}
	r.ottlErrors += scratch.ottlErrors
	runner := assertion.NewRunner(compiled, assertion.Options{MaxEventsPerGroup: pattern.Horizon})
	index := map[string]int{}
	for i, n := range r.namesByAssert {
		index[n] = i
	}
	for _, g := range groups {
		evs := make([]assertion.Event, len(g.Events))
		for i, ev := range g.Events {
			evs[i] = assertion.Event{Bits: ev.Bits, Time: int64(ev.Start), Name: predicate.Describe(ev.Span), Span: ev.Span}
		}
		bg := badGroup{key: g.Key, events: len(evs), violations: map[string]int{}}
		for _, v := range runner.Run(g.Key, evs, true) {
			if v.Violation {
				bg.violations[v.Assertion.Name]++
			}
		}
		for name := range bg.violations {
			r.flagsByAssert[index[name]]++
		}
		if len(bg.violations) == 0 {
			r.unflagged++
		}
		r.bad = append(r.bad, bg)
	}
	return nil
}

// block is the processor block: the configuration's own settings and
// predicates, the auto predicates the mined assertions need, and the
// assertions, each with its support and meaning in a comment.
func (r *mineReport) block(path string, id component.ID, final predicate.Config) ([]byte, error) {
	conf, err := resolve(path)
	if err != nil {
		return nil, err
	}
	sub, err := conf.Sub("processors::" + id.String())
	if err != nil {
		return nil, err
	}
	raw := sub.ToStringMap()
	used := map[string]bool{}
	for _, m := range r.mined.Mined {
		for _, a := range m.Pattern.Args {
			for _, e := range a.Events {
				used[e] = true
			}
		}
	}
	var autos []predicate.Named
	for _, p := range final.Predicates {
		if slices.Contains(r.auto, p.Name) && used[p.Name] {
			autos = append(autos, p)
		}
	}
	block := mapping()
	keys := make([]string, 0, len(raw))
	for k := range raw {
		if k != "assertions" && k != "predicates" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		var n yaml.Node
		if err := n.Encode(raw[k]); err != nil {
			return nil, err
		}
		add(block, k, &n)
	}
	preds, err := predicatesNode(raw["predicates"], autos)
	if err != nil {
		return nil, err
	}
	add(block, "predicates", preds)
	asserts := &yaml.Node{Kind: yaml.SequenceNode}
	for i, m := range r.mined.Mined {
		a := mapping()
		add(a, "name", scalar(r.namesByAssert[i]))
		params := mapping()
		params.Style = yaml.FlowStyle
		for _, arg := range m.Pattern.Args {
			add(params, arg.Name, argNode(arg))
		}
		add(a, m.Pattern.Name, params)
		a.HeadComment = fmt.Sprintf("support %d of %d groups: %s", m.Support, r.groups, m.Pattern.Meaning())
		if r.badFiles > 0 {
			a.HeadComment += fmt.Sprintf("\nviolated in %d of %d bad groups", r.flagsByAssert[i], len(r.bad))
		}
		asserts.Content = append(asserts.Content, a)
	}
	add(block, "assertions", asserts)
	root, procs := mapping(), mapping()
	add(procs, r.outputProcessor, block)
	add(root, "processors", procs)
	root.HeadComment = fmt.Sprintf("Mined by agentguard mine from %s: %s (group_by %s, %s) of %s.\n"+
		"Each assertion holds on every group; support is the groups in which it was exercised.\n"+
		"Paste the processor into the collector configuration and add it to a traces pipeline.",
		r.processorID, plural(r.groups, "group"), r.groupBy, plural(r.events, "event"), plural(r.files, "file"))
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// predicatesNode is the configuration's predicates, as written (a list or
// a map), with the auto predicates added in the same form.
func predicatesNode(raw any, autos []predicate.Named) (*yaml.Node, error) {
	autoMap := func(p predicate.Named) map[string]any {
		if p.Tool != "" {
			return map[string]any{"tool": p.Tool}
		}
		return map[string]any{"transfer_to": p.TransferTo}
	}
	if m, ok := raw.(map[string]any); ok {
		m = maps.Clone(m)
		for _, p := range autos {
			m[p.Name] = autoMap(p)
		}
		var n yaml.Node
		return &n, n.Encode(m)
	}
	list, _ := raw.([]any)
	n := &yaml.Node{Kind: yaml.SequenceNode}
	for _, item := range list {
		var e yaml.Node
		if err := e.Encode(item); err != nil {
			return nil, err
		}
		e.Style = yaml.FlowStyle
		n.Content = append(n.Content, &e)
	}
	for _, p := range autos {
		e := mapping()
		e.Style = yaml.FlowStyle
		add(e, "name", scalar(p.Name))
		for k, v := range autoMap(p) {
			add(e, k, scalar(v.(string)))
		}
		n.Content = append(n.Content, e)
	}
	if len(autos) > 0 {
		n.Content[len(list)].HeadComment = "declared for mining: one per tool called and per agent transferred to"
	}
	return n, nil
}

func argNode(a pattern.Arg) *yaml.Node {
	switch {
	case a.Events == nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(a.Count)}
	case len(a.Events) == 1:
		return scalar(a.Events[0])
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, e := range a.Events {
		n.Content = append(n.Content, scalar(e))
	}
	return n
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func add(m *yaml.Node, key string, v *yaml.Node) { m.Content = append(m.Content, scalar(key), v) }

// print says on stderr what was mined and what the bad runs did.
func (r *mineReport) print(w io.Writer) {
	res := r.mined
	fmt.Fprintf(w, "agentguard mine: %s of %s, %s: %s hold on every group (%d held, %d implied by others left out)\n",
		plural(r.groups, "group"), plural(r.files, "file"), plural(r.events, "event"), plural(len(res.Mined), "assertion"),
		res.Candidates, res.Implied)
	if len(r.auto) > 0 {
		fmt.Fprintf(w, "agentguard mine: predicates declared for mining: %s\n", strings.Join(r.auto, ", "))
	}
	if len(r.droppedAuto) > 0 {
		fmt.Fprintf(w, "agentguard mine: warning: no predicate bits left for %s (the least frequent): not mined over\n", strings.Join(r.droppedAuto, ", "))
	}
	if r.ottlErrors > 0 {
		fmt.Fprintf(w, "agentguard mine: warning: %d OTTL evaluation errors: those predicates count as false at those spans\n", r.ottlErrors)
	}
	if res.Refuted > 0 {
		fmt.Fprintf(w, "agentguard mine: warning: %d candidates the engine judged violated or pending although the runs' counts said they held: left out\n", res.Refuted)
	}
	if r.badFiles == 0 {
		return
	}
	fmt.Fprintf(w, "against %s of %s:\n", plural(len(r.bad), "bad group"), plural(r.badFiles, "file"))
	for _, g := range r.bad {
		if len(g.violations) == 0 {
			fmt.Fprintf(w, "  NOT FLAGGED group %s (%s): no proposed assertion is violated\n", g.key, plural(g.events, "event"))
			continue
		}
		var parts []string
		for _, name := range r.namesByAssert {
			if n := g.violations[name]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s (%d)", name, n))
			}
		}
		fmt.Fprintf(w, "  FLAGGED group %s (%s) by %s\n", g.key, plural(g.events, "event"), strings.Join(parts, ", "))
	}
	if r.unflagged == 0 {
		fmt.Fprintf(w, "every bad group violates a proposed assertion\n")
	} else {
		fmt.Fprintf(w, "%s no proposed assertion flags\n", plural(r.unflagged, "bad group"))
	}
}
