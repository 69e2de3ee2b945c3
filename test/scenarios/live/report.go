// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// printJudgement prints each conversation's verdicts from both, then the
// counts.
func printJudgement(w io.Writer, j judgement, fromCollector, fromCheck int) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "conversation\tthe collector reported\tcheck reported\t")
	faulty := 0
	for _, o := range j.outcomes {
		if o.conv.faulty() {
			faulty++
		}
		chk := "the same"
		if !o.agree {
			chk = list(o.check)
		}
		var notes []string
		if !o.agree {
			notes = append(notes, "DISAGREE")
		}
		if o.falseAlarm {
			notes = append(notes, "FALSE ALARM")
		}
		if len(o.missedBy) > 0 {
			notes = append(notes, fmt.Sprintf("MISSED (no %s) by %s", o.conv.Expect, strings.Join(o.missedBy, " and ")))
		}
		if o.collectorShutdowns > 0 {
			notes = append(notes, fmt.Sprintf("%d only at the collector's shutdown", o.collectorShutdowns))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.conv.ID, list(o.collector), chk, strings.Join(notes, "; "))
	}
	tw.Flush()
	for _, s := range j.strays {
		fmt.Fprintln(w, "STRAY verdict of no conversation played:", s)
	}
	d, f, m, s := j.count()
	fmt.Fprintf(w, "\n%d conversations (%d correct, %d faulty); verdicts: the collector %d, check %d\n",
		len(j.outcomes), len(j.outcomes)-faulty, faulty, fromCollector, fromCheck)
	fmt.Fprintf(w, "disagreements: %d; false alarms on correct runs: %d of %d; misses on faulty runs: %d of %d; verdicts only at the collector's shutdown: %d\n",
		d, f, len(j.outcomes)-faulty, m, faulty, s)
}

func list(vs []verdict) string {
	if len(vs) == 0 {
		return "none"
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}

// printDelays prints the verdict delays' p50, p99 and max.
func printDelays(w io.Writer, onEvents, onVerdictSpans []time.Duration) {
	fmt.Fprintln(w, "delay from the export of the last span (the collector's answer) to the verdict record:")
	line := func(what string, ds []time.Duration) {
		if len(ds) == 0 {
			fmt.Fprintf(w, "  %s: none\n", what)
			return
		}
		fmt.Fprintf(w, "  %s: n=%d p50 %v p99 %v max %v\n", what, len(ds),
			ms(percentile(ds, 50)), ms(percentile(ds, 99)), ms(percentile(ds, 100)))
	}
	line("on the event's span, from its trace's last span (a trace is judged root_wait after its root)", onEvents)
	line("on a verdict span, from its conversation's last span (it ends group_timeout after its last trace)", onVerdictSpans)
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
