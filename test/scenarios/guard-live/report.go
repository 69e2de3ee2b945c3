// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// row is one framework, mode and kind in the table.
type row struct {
	played, completed, denied, mistakes, kept, caught, falseAlarms, guardErrors int
}

// report prints the table and the failures, and says whether the run passed.
func report(w io.Writer, results []result) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "framework\tmode\tkind\tplayed\tcompleted\twith a deny\tmistakes ran\tkept control to the end\tcaught by verdicts\tfalse alarms\tguard errors\t")
	var failures []string
	for _, res := range results {
		rows, order, fails := tally(res)
		failures = append(failures, fails...)
		for _, k := range order {
			r := rows[k]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", res.framework, res.mode, k,
				r.played, r.completed, r.denied, r.mistakes, r.kept, r.caught, r.falseAlarms, r.guardErrors)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "mistakes ran: calls that executed and break a rule (a self-transfer, a second greeting, a city not served, a lookup twice in a row);")
	fmt.Fprintln(w, "  a pre-call hook sees each before it runs: none may run with the guard.")
	fmt.Fprintln(w, "keeping control (keeps-control) is a call never made: no pre-call hook prevents it; te1's verdict at the conversation's end reports it.")
	fmt.Fprintln(w, "caught by verdicts: conversations with a violation of the assertion their kind must break (its expect).")
	fmt.Fprintln(w, "false alarms: conversations with a violation although what ran broke no rule (a correct one, or one whose mistake the guard denied).")
	for _, f := range failures {
		fmt.Fprintln(w, "FAIL:", f)
	}
	if len(failures) > 0 {
		fmt.Fprintln(w, "guard-live: FAIL")
		return false
	}
	fmt.Fprintln(w, "guard-live: PASS")
	return true
}

// tally counts one run's outcomes by kind, in the order the app planned
// them, and lists what fails the run.
func tally(res result) (map[string]*row, []string, []string) {
	at := fmt.Sprintf("%s %s", res.framework, res.mode)
	fails := append([]string(nil), prefixed(at, res.problems)...)
	rows, expect := map[string]*row{}, map[string]string{}
	var order []string
	for _, p := range res.planned {
		if rows[p.Kind] == nil {
			rows[p.Kind] = &row{}
			order = append(order, p.Kind)
		}
		expect[p.ID] = p.Expect
	}
	for _, o := range res.outcomes {
		r := rows[o.Kind]
		if r == nil {
			fails = append(fails, fmt.Sprintf("%s: %s is of no kind planned (%q)", at, o.ID, o.Kind))
			continue
		}
		want := expect[o.ID]
		caught := want != "" && res.caught[o.ID][want]
		falseAlarm := len(res.caught[o.ID]) > 0 && o.mistakes() == 0 && !o.keptControl()
		denied := o.count("deny") > 0
		r.played++
		r.completed += b2i(o.Completed)
		r.denied += b2i(denied)
		r.mistakes += o.mistakes()
		r.kept += b2i(o.keptControl())
		r.caught += b2i(caught)
		r.falseAlarms += b2i(falseAlarm)
		r.guardErrors += o.guardErrors()
		fails = append(fails, prefixed(at, judge(res.mode, want, o, denied, caught))...)
		if falseAlarm {
			fails = append(fails, fmt.Sprintf("%s: %s broke no rule, yet the collector reported %v (a false alarm)", at, o.ID, keys(res.caught[o.ID])))
		}
	}
	return rows, order, fails
}

// judge lists what is wrong with one conversation's outcome.
func judge(mode, want string, o outcome, denied, caught bool) []string {
	var fails []string
	switch {
	case want == "" && denied:
		fails = append(fails, fmt.Sprintf("the correct conversation %s got a deny", o.ID))
	case want == "" && len(o.Decisions) == 0 && mode == "deny":
		fails = append(fails, fmt.Sprintf("the guard was never asked in %s", o.ID))
	}
	if mode == "deny" && o.mistakes() > 0 {
		fails = append(fails, fmt.Sprintf("in %s a mistake ran, which the guard sees before it runs", o.ID))
	}
	if mode == "none" && want != "" && o.mistakes() == 0 && !o.keptControl() {
		fails = append(fails, fmt.Sprintf("in %s (%s) no mistake ran: the script did not play", o.ID, o.Kind))
	}
	if mode == "none" && want != "" && !caught {
		fails = append(fails, fmt.Sprintf("%s: no %s violation came from the collector (a miss)", o.ID, want))
	}
	if !o.Completed {
		fails = append(fails, fmt.Sprintf("%s did not complete: %s", o.ID, o.Error))
	}
	return fails
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func prefixed(at string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = at + ": " + l
	}
	return out
}
