// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

// Row 4's pace: a steady stream of new conversations, as many agents'
// first turns come, rather than all at once (spans arriving faster than
// they leave would be held, and the runtime keeps memory it once needed).
const (
	groupsPerRequest = 100
	groupsEvery      = 50 * time.Millisecond
	// settle is how long the collectors are left after the last export,
	// for the batches in flight to be collected.
	settle = 2 * time.Second
)

// memoryCost is row 4: the weather configuration with conversations kept
// open, and a pass-through with batch, fed the same one-turn conversations;
// the difference of their resident sets a group, read twice: just after the
// last turn (every group in memory) and once the groups have been idle for
// compact_after and collections stop lowering it (every group dormant, in
// its saved form: the state of an open conversation between two turns).
func memoryCost(o options, sk *sink) (result, error) {
	l, err := groupsLoad(o.groups, groupsPerRequest)
	if err != nil {
		return result{}, err
	}
	base, err := rssAfter(o, sk, batchSetup(), l, "rss-batch.log")
	if err != nil {
		return result{}, err
	}
	open, err := rssAfter(o, sk, openGroupsSetup(), l, "rss-weather.log")
	if err != nil {
		return result{}, err
	}
	perGroup := func(i int) float64 { return float64(open[i]-base[i]) / float64(o.groups) }
	active, idle := perGroup(0), perGroup(1)
	return result{
		row:     4,
		measure: "RSS per open conversation group (weather, group_timeout 1h), net of a pass-through with `batch`: idle (dormant after compact_after, 10 s), and just after its turn",
		figure: fmt.Sprintf("idle %.0f B a group (VmRSS %.1f MiB against %.1f); just after the turns %.0f B (%.1f against %.1f); %d groups, %d a request %v apart",
			idle, mib(open[1]), mib(base[1]), active, mib(open[0]), mib(base[0]), o.groups, groupsPerRequest, groupsEvery),
		goal: "≤ 1024 B",
		met:  idle <= 1024,
	}, nil
}

// rssAfter runs s, feeds it l at row 4's pace, and returns its VmRSS once
// every span was exported and it settled, and again once idle after
// compact_after.
func rssAfter(o options, sk *sink, s setup, l *load, log string) ([2]int64, error) {
	var rss [2]int64
	col, otlp, pprofAddr, err := startProfiled(o, s, sk, log, true)
	if err != nil {
		return rss, err
	}
	defer col.Kill()
	sk.reset()
	if err := sendPaced(otlp, l.requests, groupsEvery, nil, nil); err != nil {
		return rss, fmt.Errorf("%s: %w", s.name, err)
	}
	if err := sk.waitSpans(l.spans, col.Alive); err != nil {
		return rss, fmt.Errorf("%s: %w; its log: %s", s.name, err, col.Log())
	}
	time.Sleep(settle)
	if rss[0], err = harness.ProcessRSS(col.Pid()); err != nil {
		return rss, err
	}
	time.Sleep(compactAfter)
	if rss[1], err = idleRSS(col.Pid(), pprofAddr, o.dir); err != nil {
		return rss, fmt.Errorf("%s: %w", s.name, err)
	}
	progress("%s: VmRSS %.1f MiB just after %d groups, %.1f MiB once idle", s.name, mib(rss[0]), len(l.requests)*groupsPerRequest, mib(rss[1]))
	if o.profile != "" {
		path := filepath.Join(o.profile, strings.ReplaceAll(s.name, " ", "-")+"-heap.pb.gz")
		if err := fetchPprof(pprofAddr, "heap?gc=1", path); err != nil {
			progress("profile %s: %v", path, err)
		}
		stats := strings.TrimSuffix(path, ".pb.gz") + ".txt" // the runtime's MemStats: heap in use, idle, released
		if err := fetchPprof(pprofAddr, "heap?debug=1", stats); err != nil {
			progress("profile %s: %v", stats, err)
		}
	}
	return rss, nil
}

// compactAfter is the stage's default compact_after (the configurations
// measured do not set it), and a tick.
const compactAfter = 11 * time.Second

// idleRSS is pid's VmRSS once collections stop lowering it: a collection,
// then the runtime returns what it freed over the next seconds; from the
// second round on, a round that lowers it by less than 1 % ends it (at most
// five). An idle collector gets these from the runtime itself, one every
// two minutes: until one runs the heap's goal is still set by the groups as
// they were before compaction, and the runtime does not return the pages a
// collection freed until the next one, so one round is not yet idle.
func idleRSS(pid int, pprofAddr, dir string) (int64, error) {
	var last int64
	for round := range idleRounds {
		if err := fetchPprof(pprofAddr, "heap?gc=1", filepath.Join(dir, "gc.pb.gz")); err != nil {
			return 0, err
		}
		time.Sleep(3 * time.Second)
		rss, err := harness.ProcessRSS(pid)
		if err != nil {
			return 0, err
		}
		settled := round > 0 && float64(rss) >= 0.99*float64(last)
		last = rss
		if settled {
			return last, nil
		}
	}
	progress("VmRSS still falling after %d collections: read at %.1f MiB", idleRounds, mib(last))
	return last, nil
}

// idleRounds bounds idleRSS's collections.
const idleRounds = 5

func mib(b int64) float64 { return float64(b) / (1 << 20) }
