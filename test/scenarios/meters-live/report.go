// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// report prints the table, where each framework's spans carried what the
// meters read, and the failures; it says whether the run passed.
func report(w io.Writer, results []result) bool {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "framework\tkind\tassertion\tconversations\tcompleted\tcaught on the right span\ton another span\tmissed\tfalse alarms\tcollector ≠ check\ttoken problems\t")
	var failures [][]string // by framework
	for _, res := range results {
		rows, fails := tally(res)
		failures = append(failures, fails)
		for _, k := range meterKinds {
			r := rows[k]
			assertion := kinds[k].expect
			if assertion == "" {
				assertion = "(none)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", res.framework, k, assertion,
				r.played, r.completed, r.caught, r.wrongSpan, r.missed, r.falseAlarms, r.disagreements, r.tokenProblems)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "caught: exactly one violation of the kind's assertion, on the span the spans file says (the third identical call;")
	fmt.Fprintln(w, "  the model call that takes the conversation past 20 000 tokens; the send_email call carrying the key read earlier).")
	fmt.Fprintln(w, "false alarms: conversations with any other violation (a correct one with any; a faulty one with another assertion's, or two).")
	fmt.Fprintln(w, "collector ≠ check: conversations whose verdicts (assertion, events, span) from the live collector and agentguard check differ.")
	fmt.Fprintln(w)
	for _, res := range results {
		printCarriers(w, res)
	}
	const most = 12 // a framework's
	failed := false
	for i, fails := range failures {
		for j, f := range fails {
			if j == most {
				fmt.Fprintf(w, "FAIL: %s: ... and %d more (its files: spans.jsonl, verdicts.jsonl, check.json)\n", results[i].framework, len(fails)-most)
				break
			}
			fmt.Fprintln(w, "FAIL:", f)
		}
		failed = failed || len(fails) > 0
	}
	if failed {
		fmt.Fprintln(w, "meters-live: FAIL")
		return false
	}
	fmt.Fprintln(w, "meters-live: PASS")
	return true
}

// printCarriers says which span attributes carried the tokens, the tool
// calls' arguments and results, and on which spans.
func printCarriers(w io.Writer, res result) {
	tokens, args, results := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range res.spans.spans {
		if s.hasTokens {
			tokens[fmt.Sprintf("%s on %q spans", s.tokenKey, s.name)] = true
		}
		if s.toolCall && s.argsKey != "" {
			args[s.argsKey] = true
		}
		if s.toolCall && s.resultKey != "" {
			results[s.resultKey] = true
		}
	}
	keys := func(m map[string]bool) string {
		if len(m) == 0 {
			return "none"
		}
		return strings.Join(slices.Sorted(maps.Keys(m)), "; ")
	}
	fmt.Fprintf(w, "%s: tokens: %s; tool arguments: %s; tool results: %s\n", res.framework, keys(tokens), keys(args), keys(results))
}
