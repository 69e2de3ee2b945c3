// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"os"
	"regexp"
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

const mineSynopsis = "--config COLLECTOR.yaml [--processor temporalcheck/NAME] [--against BAD_TRACES...] [--holdout K] [--alias A=B]... [--auto-alias=false] [--min-support N] [--max-chance P] [--values=false] [--max-k K] [--name temporalcheck/mined] [--out FILE] GOOD_TRACES..."

const mineHelp = `Proposes the assertions of the pattern library (docs/patterns.md) that hold on every group of
the good traces, over the predicates the configuration's temporalcheck processor declares plus
one per tool called (tool_NAME) and per agent transferred to (to_AGENT) in them, and one per
argument or result field whose values are few in the good runs (TOOL_args_FIELD), with the
tightest parameters the runs allow, minus those implied by others. Each is ranked by how unlikely
it is to hold by chance given the predicates' frequencies; a weak one (exercised in fewer than
--min-support groups, or holding by chance with a probability above --max-chance) is written
commented out with the reason. Names of one agent or tool across frameworks or versions are one
role (aliases). It writes a temporalcheck processor block ready to paste into the collector
configuration (or to give to agentguard check --config).
With --against BAD_TRACES... it says which proposed assertions each bad group breaks, and those
that separate good from bad come first. With --holdout K it mines on all but K good groups (spread
evenly over the group keys in order) and says which proposals those break.

Exit status: 0 done; 1 --against and a bad group that no strong proposal flags; 2 a usage or
input error.

`

// mineOptions are mine's flags.
type mineOptions struct {
	config, processor, name, out string
	minSupport, maxK, holdout    int
	maxChance                    float64
	noValues, noAutoAlias        bool
	aliases                      []string
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
	values, autoAlias := true, true
	fs.StringVar(&o.config, "config", "", "the collector configuration `file` whose temporalcheck processor declares the predicates")
	fs.StringVar(&o.processor, "processor", "", "which temporalcheck processor, e.g. temporalcheck/agents (default: the only one)")
	fs.StringVar(&o.name, "name", "temporalcheck/mined", "the processor `id` of the block written")
	fs.StringVar(&o.out, "out", "", "write the block to this `file` (default: stdout)")
	fs.IntVar(&o.minSupport, "min-support", pattern.MinGroups, "an assertion exercised in fewer good groups is weak, written commented out (1: none for this)")
	fs.Float64Var(&o.maxChance, "max-chance", pattern.DefaultMaxChance, "an assertion holding by chance with a higher `probability` is weak (1: none for this)")
	fs.IntVar(&o.holdout, "holdout", 0, "mine on all but `K` good groups (spread evenly over the keys in order) and report what they break")
	fs.Var((*fileList)(&o.aliases), "alias", "predicates (or the tool or agent names they match) that are one role, as `A=B[=C...]`; repeat for more")
	fs.BoolVar(&autoAlias, "auto-alias", true, "take as one role the tools or agents whose names differ only by case, separators, a version suffix or a transfer_to_ prefix, and that never share a good group")
	fs.BoolVar(&values, "values", true, "propose argument and result predicates from fields whose values are few")
	fs.IntVar(&o.maxK, "max-k", 10, "the largest k of response and handoff_returns")
	fs.Var(againstFlag{&o.bad}, "against", "bad trace `files` (all the arguments after it): report which proposed assertions they break")
	if err != nil {
		fmt.Fprintln(stderr, "agentguard mine:", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.good = fs.Args()
	o.noValues, o.noAutoAlias = !values, !autoAlias
	rep, err := mine(o)
	if err != nil {
		fmt.Fprintln(stderr, "agentguard mine:", err)
		return 2
	}
	if o.out != "" {
		if err := os.WriteFile(o.out, rep.yaml, 0o644); err != nil {
			fmt.Fprintln(stderr, "agentguard mine:", err)
			return 2
		}
	} else {
		_, _ = stdout.Write(rep.yaml)
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
	yaml                 []byte
	files, badFiles      int
	groups, events       int           // the good groups mined, and their events
	held                 []judgedGroup // the good groups held out
	bad                  []judgedGroup
	unflagged            int // bad groups no strong proposal breaks
	auto                 []string
	droppedAuto          []string // auto predicates beyond the bit budget
	values               []valuePredicate
	noProbes             bool // no bits left to read arguments and results
	aliases              [][]string
	mined                pattern.MineResult
	namesByAssert        []string
	ottlErrors           int
	minSupport           int
	groupBy, processorID string
	outputProcessor      string
}

// judgedGroup is what the proposals say of one held-out or bad group.
type judgedGroup struct {
	key     string
	events  int
	broken  []int        // indices into mined.Mined
	pending map[int]bool // of them, those left pending (not violated)
	strong  bool         // some strong proposal breaks it
}

func mine(o mineOptions) (*mineReport, error) {
	switch {
	case o.config == "":
		return nil, errors.New("--config is required")
	case len(o.good) == 0:
		return nil, errors.New("no good trace files given")
	case o.minSupport < 1:
		return nil, fmt.Errorf("--min-support %d: want at least 1", o.minSupport)
	case !(o.maxChance > 0 && o.maxChance <= 1):
		return nil, fmt.Errorf("--max-chance %g: want a probability above 0, at most 1", o.maxChance)
	case o.holdout < 0:
		return nil, fmt.Errorf("--holdout %d: want 0 or more good groups", o.holdout)
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
	rep := &mineReport{files: len(o.good), badFiles: len(o.bad), groupBy: cfg.GroupBy, processorID: id.String(),
		outputProcessor: o.name, minSupport: o.minSupport}

	// The first reading: the tools and agents the good runs show, and the
	// values of their calls' arguments and results.
	declared := cfg.Config
	nDeclared := len(declared.Predicates)
	probed, probes := declared, false
	if !o.noValues {
		probed, probes = withProbes(declared)
		rep.noProbes = !probes
	}
	first, _, err := readEventGroups(id, probed, cfg.GroupBy, o.good)
	if err != nil {
		return nil, err
	}
	if countEvents(first) == 0 {
		return nil, fmt.Errorf("no events in the good traces: the events condition selected none of their spans")
	}
	heldOut, err := holdoutKeys(first, o.holdout)
	if err != nil {
		return nil, err
	}
	train, _ := splitGroups(first, heldOut)
	autos := discover(train, declared.Predicates)
	var vps []valuePredicate
	if probes {
		fields, calls := callValues(train, nDeclared, nDeclared+1)
		vps = valuePredicates(fields, calls, toolPredicates(declared.Predicates, autos), takenNames(declared.Predicates, autos))
	}
	extended, nAutos, nValues := extend(declared, autos, vps)
	for _, a := range autos[nAutos:] {
		rep.droppedAuto = append(rep.droppedAuto, a.Name)
	}
	vps = vps[:nValues]

	// The second reading, over every predicate.
	all, errs, err := readEventGroups(id, extended, cfg.GroupBy, o.good)
	if err != nil {
		return nil, err
	}
	rep.ottlErrors += errs
	trainG, heldG := splitGroups(all, heldOut)
	final, keep, survivor := dedupe(extended, nDeclared, nDeclared+nAutos, trainG)
	for _, p := range final.Predicates[nDeclared:] {
		if !slices.ContainsFunc(vps, func(v valuePredicate) bool { return v.named.Name == p.Name }) {
			rep.auto = append(rep.auto, p.Name)
		}
	}
	trainBits := remap(trainG, keep)
	// value predicates: their bit in final, and their tool's
	valueAt := map[int]valuePredicate{}
	toolOf := map[int]int{}
	for _, vp := range vps {
		i := slices.IndexFunc(final.Predicates, func(p predicate.Named) bool { return p.Name == vp.named.Name })
		t := slices.IndexFunc(extended.Predicates, func(p predicate.Named) bool { return p.Name == vp.base })
		if i < 0 || t < 0 {
			continue
		}
		valueAt[i] = vp
		toolOf[i] = survivor[t]
	}
	skip := map[int]bool{}
	for i := range valueAt {
		skip[i] = true
	}
	classOf, err := aliasClasses(final.Predicates, trainBits, o.aliases, skip, !o.noAutoAlias)
	if err != nil {
		return nil, err
	}
	preds, toMining := miningPredicates(final.Predicates, classOf, valueAt, toolOf)
	for i, c := range classOf {
		if c == i {
			var names []string
			for j, cj := range classOf {
				if cj == i {
					names = append(names, final.Predicates[j].Name)
				}
			}
			if len(names) > 1 {
				rep.aliases = append(rep.aliases, names)
			}
		}
	}
	for i, vp := range valueAt {
		if toMining[i] >= 0 {
			rep.values = append(rep.values, vp)
		}
	}
	slices.SortFunc(rep.values, func(a, b valuePredicate) int { return strings.Compare(a.named.Name, b.named.Name) })
	var badM [][]uint64
	var badG []events.Group
	if len(o.bad) > 0 {
		var errs int
		if badG, errs, err = readEventGroups(id, final, cfg.GroupBy, o.bad); err != nil {
			return nil, err
		}
		rep.ottlErrors += errs
		badM = miningBits(remap(badG, identity(len(final.Predicates))), toMining)
	}
	trainM := miningBits(trainBits, toMining)
	rep.groups, rep.events = len(trainM), countEvents(trainG)
	res, err := pattern.Mine(preds, trainM, pattern.MineOptions{MaxK: o.maxK, MinSupport: o.minSupport, MaxChance: o.maxChance, Against: badM})
	if err != nil {
		return nil, err
	}
	rep.mined = res
	rep.namesByAssert = assertionNames(res.Mined)
	rep.held = rep.judge(heldG, miningBits(remap(heldG, keep), toMining))
	rep.bad = rep.judge(badG, badM)
	for _, g := range rep.bad {
		if !g.strong {
			rep.unflagged++
		}
	}
	y, err := rep.block(o.config, id, final)
	if err != nil {
		return nil, err
	}
	rep.yaml = y
	return rep, nil
}

func countEvents(groups []events.Group) int {
	n := 0
	for _, g := range groups {
		n += len(g.Events)
	}
	return n
}

// holdoutKeys are k groups spread evenly over the groups in key order
// (the middle one of each of k equal runs of keys): the same every run,
// whatever the files' order, and, where keys carry a time or a kind, drawn
// from all of them rather than from one end.
func holdoutKeys(groups []events.Group, k int) (map[string]bool, error) {
	if k == 0 {
		return nil, nil
	}
	if k >= len(groups) {
		return nil, fmt.Errorf("--holdout %d: the good traces have %s; hold out fewer", k, plural(len(groups), "group"))
	}
	keys := make([]string, len(groups))
	for i, g := range groups {
		keys[i] = g.Key
	}
	slices.Sort(keys)
	out := map[string]bool{}
	for j := range k {
		out[keys[(2*j+1)*len(keys)/(2*k)]] = true
	}
	return out, nil
}

func splitGroups(groups []events.Group, held map[string]bool) (train, out []events.Group) {
	for _, g := range groups {
		if held[g.Key] {
			out = append(out, g)
		} else {
			train = append(train, g)
		}
	}
	return train, out
}

// judge runs the proposals over groups (their events, and the same as
// mining bits).
func (r *mineReport) judge(groups []events.Group, bits [][]uint64) []judgedGroup {
	out := make([]judgedGroup, len(groups))
	for g, grp := range groups {
		jg := judgedGroup{key: grp.Key, events: len(grp.Events), pending: map[int]bool{}}
		for i, m := range r.mined.Mined {
			violated, pending := m.Judge(bits[g])
			if !violated && !pending {
				continue
			}
			jg.broken = append(jg.broken, i)
			jg.pending[i] = !violated
			jg.strong = jg.strong || !m.Weak
		}
		out[g] = jg
	}
	return out
}

// readEventGroups reads trace files into their groups' events as the
// processor sequences them, and counts the OTTL errors.
func readEventGroups(id component.ID, pc predicate.Config, groupBy string, files []string) ([]events.Group, int, error) {
	ts := offlineSettings(id, io.Discard).TelemetrySettings
	ts.Logger = zap.NewNop() // OTTL errors are counted and reported once
	src, err := events.NewSource(pc, groupBy, ts)
	if err != nil {
		return nil, 0, fmt.Errorf("processors::%s: %w", id, err)
	}
	tds, err := readTraceFiles(files)
	if err != nil {
		return nil, 0, err
	}
	groups, errs := src.Groups(tds)
	return groups, errs.Count, nil
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

// toolPredicates maps each tool to the predicate that is its calls: a
// declared one (a tool shorthand alone) first, else its auto predicate.
func toolPredicates(declared predicate.List, autos []autoPredicate) map[string]string {
	out := map[string]string{}
	for _, p := range declared {
		if kind, tool, ok := literal(p.Predicate); ok && kind == "tool" {
			if _, seen := out[tool]; !seen {
				out[tool] = p.Name
			}
		}
	}
	for _, a := range autos {
		if a.Tool != "" {
			if _, seen := out[a.Tool]; !seen {
				out[a.Tool] = a.Name
			}
		}
	}
	return out
}

func takenNames(declared predicate.List, autos []autoPredicate) map[string]bool {
	out := map[string]bool{probeArgs: true, probeResult: true}
	for _, p := range declared {
		out[p.Name] = true
	}
	for _, a := range autos {
		out[a.Name] = true
	}
	return out
}

// extend adds as many auto predicates (most frequent first), then value
// predicates (likeliest first), as the predicate bits allow; it says how
// many of each it kept. A value predicate whose tool's auto predicate was
// left out is left out too.
func extend(declared predicate.Config, autos []autoPredicate, values []valuePredicate) (predicate.Config, int, int) {
	fits := func(c predicate.Config) bool { return len(c.Predicates) <= texpr.MaxPredicates && c.Validate() == nil }
	with := func(nA, nV int) predicate.Config {
		c := declared
		c.Predicates = slices.Clone(declared.Predicates)
		for _, a := range autos[:nA] {
			c.Predicates = append(c.Predicates, a.Named)
		}
		for _, v := range values[:nV] {
			c.Predicates = append(c.Predicates, v.named)
		}
		return c
	}
	nA := len(autos)
	for nA > 0 && !fits(with(nA, 0)) {
		nA--
	}
	names := map[string]bool{}
	for _, p := range with(nA, 0).Predicates {
		names[p.Name] = true
	}
	var kept []valuePredicate
	for _, v := range values {
		if names[v.base] {
			kept = append(kept, v)
		}
	}
	copy(values, kept)
	nV := len(kept)
	for nV > 0 && !fits(with(nA, nV)) {
		nV--
	}
	return with(nA, nV), nA, nV
}

// dedupe drops every auto predicate (those from index declared up to
// values) that holds at exactly the events where a predicate before it
// holds: a declared one says the same under the user's own name. keep lists
// the old bit of each predicate kept, in order; survivor gives, for each
// old bit, the new bit of the predicate that holds where it holds.
func dedupe(c predicate.Config, declared, values int, groups []events.Group) (predicate.Config, []int, []int) {
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
	seen := map[string]int{}
	var keep []int
	survivor := make([]int, len(c.Predicates))
	out := c
	out.Predicates = nil
	for i, p := range c.Predicates {
		col := column(i)
		if j, ok := seen[col]; ok && i >= declared && i < values {
			survivor[i] = j
			continue
		}
		if _, ok := seen[col]; !ok {
			seen[col] = len(keep)
		}
		survivor[i] = len(keep)
		keep = append(keep, i)
		out.Predicates = append(out.Predicates, p)
	}
	return out, keep, survivor
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

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// miningPredicates are what the miner sees: one predicate per role (its
// representative's name, the others' as aliases) and the value predicates
// of tools that are a role of their own. toMining gives each predicate's
// bit among them, -1 for a value predicate left out.
func miningPredicates(list predicate.List, classOf []int, values map[int]valuePredicate, toolOf map[int]int) ([]pattern.MinePredicate, []int) {
	rs := roles(list)
	toMining := make([]int, len(list))
	var out []pattern.MinePredicate
	for i := range list {
		toMining[i] = -1
		if classOf[i] != i {
			continue
		}
		if _, isValue := values[i]; isValue {
			continue
		}
		toMining[i] = len(out)
		out = append(out, rs[i])
	}
	for i := range list {
		if c := classOf[i]; c != i {
			toMining[i] = toMining[c]
			out[toMining[c]].Aliases = append(out[toMining[c]].Aliases, list[i].Name)
		}
	}
	members := map[int]int{}
	for _, c := range classOf {
		members[c]++
	}
	for i := range list {
		vp, isValue := values[i]
		if !isValue {
			continue
		}
		t := classOf[toolOf[i]]
		if members[t] > 1 || toMining[t] < 0 {
			continue // a tool of several names: its values are not proposed
		}
		toMining[i] = len(out)
		p := rs[i]
		p.Narrows = &pattern.Narrowing{Of: toMining[t], Field: vp.field, Values: vp.values, Calls: vp.calls, Once: vp.once}
		out = append(out, p)
	}
	return out, toMining
}

// miningBits moves bits to the miner's: each role's members on one bit.
func miningBits(groups [][]uint64, toMining []int) [][]uint64 {
	out := make([][]uint64, len(groups))
	for g, evs := range groups {
		out[g] = make([]uint64, len(evs))
		for c, b := range evs {
			for ; b != 0; b &= b - 1 {
				i := bits.TrailingZeros64(b)
				if i < len(toMining) && toMining[i] >= 0 {
					out[g][c] |= 1 << uint(toMining[i])
				}
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
// parameters (response_xferToGreeting_sayHello), a value proposal after its
// value predicate (values_getWeather_args_city).
func assertionNames(mined []pattern.Mined) []string {
	taken := map[string]bool{}
	out := make([]string, len(mined))
	for i, m := range mined {
		var parts []string
		if m.Never != "" {
			words := predicateWords(m.Never)
			parts = []string{"values", words[len(words)-1]}
		} else {
			parts = []string{m.Pattern.Name}
			for _, a := range m.Pattern.Args {
				if a.Events != nil && (m.Pattern.Name != "handoff_returns" || a.Name == "to") {
					parts = append(parts, strings.Join(a.Events, "_or_"))
				}
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

var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// predicateWords are the names an expression uses.
func predicateWords(expr string) []string { return word.FindAllString(expr, -1) }

// configs are the mined assertions, strong and weak, as a configuration
// writes them.
func (r *mineReport) configs() []assertion.Config {
	out := make([]assertion.Config, len(r.mined.Mined))
	for i := range out {
		out[i] = r.config(i)
	}
	return out
}

// config is a mined assertion as a configuration writes it.
func (r *mineReport) config(i int) assertion.Config {
	m := r.mined.Mined[i]
	if m.Never != "" {
		return assertion.Config{Name: r.namesByAssert[i], Never: m.Never}
	}
	return assertion.Config{Name: r.namesByAssert[i], Pattern: map[string]any{m.Pattern.Name: m.Params}}
}

// block is the processor block: the configuration's own settings and
// predicates, the predicates declared for mining that the proposals name,
// the strong assertions, each with its support, chance and meaning in a
// comment, then the weak ones commented out with the reason.
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
		for _, w := range predicateWords(m.Never) {
			used[w] = true
		}
	}
	var added []addedPredicate
	for _, p := range final.Predicates {
		if !used[p.Name] {
			continue
		}
		if slices.Contains(r.auto, p.Name) {
			added = append(added, addedPredicate{name: p.Name, raw: autoMap(p)})
		}
		for _, v := range r.values {
			if v.named.Name == p.Name {
				added = append(added, addedPredicate{name: p.Name, raw: v.raw, value: true})
			}
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
	preds, err := predicatesNode(raw["predicates"], added)
	if err != nil {
		return nil, err
	}
	add(block, "predicates", preds)
	asserts := &yaml.Node{Kind: yaml.SequenceNode}
	var weak []string
	for i, m := range r.mined.Mined {
		a, err := r.assertionNode(i)
		if err != nil {
			return nil, err
		}
		if m.Weak {
			weak = append(weak, r.weakComment(i, a))
			continue
		}
		a.HeadComment = fmt.Sprintf("support %d of %d groups (%s), by chance %s: %s", m.Support, r.groups,
			plural(m.Events, "event"), pattern.FormatChance(m.Log10Chance), m.Meaning())
		if r.badFiles > 0 {
			a.HeadComment += fmt.Sprintf("\nbreaks %d of %d bad groups", len(m.Broken), len(r.bad))
		}
		asserts.Content = append(asserts.Content, a)
	}
	if len(asserts.Content) == 0 {
		// nothing strong: an empty key, under which the weak ones can be
		// uncommented as they are
		asserts = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	}
	add(block, "assertions", asserts)
	root, procs := mapping(), mapping()
	add(procs, r.outputProcessor, block)
	add(root, "processors", procs)
	root.HeadComment = fmt.Sprintf("Mined by agentguard mine from %s: %s (group_by %s, %s) of %s.\n"+
		"Each assertion holds on every group; support is the groups in which it was exercised, chance the\n"+
		"probability that it holds on them by chance (docs/patterns.md). Weak ones are commented out at the end.\n"+
		"Paste the processor into the collector configuration and add it to a traces pipeline.",
		r.processorID, plural(r.groups, "group"), r.groupBy, plural(r.events, "event"), plural(r.files, "file"))
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if len(weak) > 0 {
		buf.WriteString(strings.Join(weak, ""))
	}
	return buf.Bytes(), nil
}

// assertionNode is a mined assertion as the block writes it.
func (r *mineReport) assertionNode(i int) (*yaml.Node, error) {
	m := r.mined.Mined[i]
	a := mapping()
	add(a, "name", scalar(r.namesByAssert[i]))
	if m.Never != "" {
		add(a, "never", scalar(m.Never))
		return a, nil
	}
	params := mapping()
	params.Style = yaml.FlowStyle
	for _, arg := range m.Pattern.Args {
		add(params, arg.Name, argNode(arg))
	}
	add(a, m.Pattern.Name, params)
	return a, nil
}

// weakComment is a weak assertion commented out, under its reason, at the
// assertions' indentation (the block's last key, so the text goes last).
func (r *mineReport) weakComment(i int, a *yaml.Node) string {
	m := r.mined.Mined[i]
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	_ = enc.Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{a}})
	_ = enc.Close()
	const indent = "      "
	var b strings.Builder
	why := m.Why + ": " + m.Meaning()
	if r.badFiles > 0 {
		why += fmt.Sprintf("; breaks %d of %d bad groups", len(m.Broken), len(r.bad))
	}
	b.WriteString(indent + "# " + why + "\n")
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		b.WriteString(indent + "# " + line + "\n")
	}
	return b.String()
}

// addedPredicate is a predicate declared for mining that the block writes.
type addedPredicate struct {
	name  string
	raw   map[string]any
	value bool
}

func autoMap(p predicate.Named) map[string]any {
	if p.Tool != "" {
		return map[string]any{"tool": p.Tool}
	}
	return map[string]any{"transfer_to": p.TransferTo}
}

// predicatesNode is the configuration's predicates, as written (a list or
// a map), with the predicates declared for mining added in the same form.
func predicatesNode(raw any, added []addedPredicate) (*yaml.Node, error) {
	if m, ok := raw.(map[string]any); ok {
		m = maps.Clone(m)
		for _, p := range added {
			m[p.name] = p.raw
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
	firstValue := true
	for i, p := range added {
		e := mapping()
		e.Style = yaml.FlowStyle
		add(e, "name", scalar(p.name))
		for _, k := range slices.SortedFunc(maps.Keys(p.raw), func(a, b string) int {
			return cmp.Or(cmp.Compare(b2i(a != "tool" && a != "transfer_to"), b2i(b != "tool" && b != "transfer_to")), strings.Compare(a, b))
		}) {
			var v yaml.Node
			if err := v.Encode(p.raw[k]); err != nil {
				return nil, err
			}
			quoteRegexps(&v)
			add(e, k, &v)
		}
		switch {
		case i == 0 && !p.value:
			e.HeadComment = "declared for mining: one per tool called and per agent transferred to"
		case p.value && firstValue:
			e.HeadComment = "declared for mining: a tool's calls with an argument or result among the values the good runs showed"
		}
		firstValue = firstValue && !p.value
		n.Content = append(n.Content, e)
	}
	return n, nil
}

// quoteRegexps writes a value predicate's regexps ('^(London|Paris)$')
// single-quoted, as docs/predicates.md writes them.
func quoteRegexps(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.HasPrefix(n.Value, "^") {
		n.Style = yaml.SingleQuotedStyle
	}
	for _, c := range n.Content {
		quoteRegexps(c)
	}
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

// print says on stderr what was mined, what the held-out groups broke and
// what the bad runs did.
func (r *mineReport) print(w io.Writer) {
	res := r.mined
	strong := 0
	for _, m := range res.Mined {
		if !m.Weak {
			strong++
		}
	}
	held := ""
	if len(r.held) > 0 {
		held = fmt.Sprintf(" (%d more held out)", len(r.held))
	}
	fmt.Fprintf(w, "agentguard mine: %s%s of %s, %s: %s hold on every group, %d strong, %d weak (commented out); %d held, %d implied by others left out\n",
		plural(r.groups, "good group"), held, plural(r.files, "file"), plural(r.events, "event"), plural(len(res.Mined), "assertion"),
		strong, len(res.Mined)-strong, res.Candidates, res.Implied)
	if len(r.auto) > 0 {
		fmt.Fprintf(w, "agentguard mine: predicates declared for mining: %s\n", strings.Join(r.auto, ", "))
	}
	for _, v := range r.values {
		fmt.Fprintf(w, "agentguard mine: value predicate %s: %s %s at every one of %s\n", v.named.Name, v.tool, valueWords(v), plural(v.calls, "call"))
	}
	for _, a := range r.aliases {
		fmt.Fprintf(w, "agentguard mine: one role, several names (aliases): %s\n", strings.Join(a, " = "))
	}
	if len(r.droppedAuto) > 0 {
		fmt.Fprintf(w, "agentguard mine: warning: no predicate bits left for %s (the least frequent): not mined over\n", strings.Join(r.droppedAuto, ", "))
	}
	if r.noProbes {
		fmt.Fprintf(w, "agentguard mine: warning: no predicate bits left to read arguments and results: no value predicates\n")
	}
	if r.ottlErrors > 0 {
		fmt.Fprintf(w, "agentguard mine: warning: %d OTTL evaluation errors: those predicates count as false at those spans\n", r.ottlErrors)
	}
	if res.Refuted > 0 {
		fmt.Fprintf(w, "agentguard mine: warning: %d candidates the engine judged violated or pending although the runs' counts said they held: left out\n", res.Refuted)
	}
	if r.groups < pattern.MinGroups {
		fmt.Fprintf(w, "agentguard mine: warning: %s: too few to tell a rule from chance. Two events that each happen once "+
			"are in either order by chance half the time: %s in that order happen by chance with probability %s, "+
			"5 with 1/32 (below 0.05); record %d good groups at least. Proposals exercised in fewer than --min-support %d are commented out.\n",
			plural(r.groups, "good group"), plural(r.groups, "group"), pattern.FormatChance(-float64(r.groups)*math.Log10(2)), pattern.MinGroups, r.minSupport)
	}
	if r.groups > 0 {
		fmt.Fprintf(w, "agentguard mine: a proposal that held on all %s may still fail on up to %.0f%% of correct runs (rule of three, 95%% confidence)\n",
			plural(r.groups, "good group"), 100*min(1, 3/float64(r.groups)))
	}
	if len(r.held) > 0 {
		fmt.Fprintf(w, "held out %s (spread evenly over the keys in order):\n", plural(len(r.held), "good group"))
		brokeStrong, brokeWeak := map[int]bool{}, map[int]bool{}
		for _, g := range r.held {
			if len(g.broken) == 0 {
				fmt.Fprintf(w, "  group %s (%s): breaks no proposal\n", g.key, plural(g.events, "event"))
				continue
			}
			for _, i := range g.broken {
				if res.Mined[i].Weak {
					brokeWeak[i] = true
				} else {
					brokeStrong[i] = true
				}
			}
			what := "BREAKS"
			if !g.strong {
				what = "breaks only weak proposals:"
			}
			fmt.Fprintf(w, "  group %s (%s): %s %s\n", g.key, plural(g.events, "event"), what, r.brokenList(g))
		}
		fmt.Fprintf(w, "the held-out groups break %d of %d strong proposals (%d of %d weak ones)\n",
			len(brokeStrong), strong, len(brokeWeak), len(res.Mined)-strong)
	}
	if r.badFiles == 0 {
		return
	}
	separating := 0
	for _, m := range res.Mined {
		if !m.Weak && len(m.Broken) > 0 {
			separating++
		}
	}
	fmt.Fprintf(w, "against %s of %s: %d strong proposals break some (they come first)\n", plural(len(r.bad), "bad group"), plural(r.badFiles, "file"), separating)
	for _, g := range r.bad {
		switch {
		case len(g.broken) == 0:
			fmt.Fprintf(w, "  NOT FLAGGED group %s (%s): no proposal breaks it\n", g.key, plural(g.events, "event"))
		case !g.strong:
			fmt.Fprintf(w, "  NOT FLAGGED group %s (%s): only weak proposals break it: %s\n", g.key, plural(g.events, "event"), r.brokenList(g))
		default:
			fmt.Fprintf(w, "  FLAGGED group %s (%s) by %s\n", g.key, plural(g.events, "event"), r.brokenList(g))
		}
	}
	if r.unflagged == 0 {
		fmt.Fprintf(w, "every bad group breaks a strong proposal\n")
	} else {
		fmt.Fprintf(w, "%s no strong proposal flags\n", plural(r.unflagged, "bad group"))
	}
}

// brokenList names the proposals a group breaks, strong ones first, each
// with how: name (violated), name (pending), name (weak, violated).
func (r *mineReport) brokenList(g judgedGroup) string {
	var parts []string
	for _, i := range g.broken {
		how := "violated"
		if g.pending[i] {
			how = "left pending"
		}
		if r.mined.Mined[i].Weak {
			how = "weak, " + how
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", r.namesByAssert[i], how))
	}
	return strings.Join(parts, ", ")
}

// valueWords: has args.city "London" or "Paris".
func valueWords(v valuePredicate) string {
	if len(v.values) == 1 {
		return "has " + v.field + " " + v.values[0]
	}
	return "has " + v.field + " one of " + strings.Join(v.values, ", ")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
