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
// the difference of their resident sets a group.
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
	perGroup := float64(open-base) / float64(o.groups)
	return result{
		row:     4,
		measure: "RSS per open conversation group (weather, group_timeout 1h), net of a pass-through with `batch`",
		figure: fmt.Sprintf("%.0f B a group (%d groups, %d a request %v apart); VmRSS %.1f MiB against %.1f MiB",
			perGroup, o.groups, groupsPerRequest, groupsEvery, mib(open), mib(base)),
		goal: "≤ 1024 B",
		met:  perGroup <= 1024,
	}, nil
}

// rssAfter runs s, feeds it l at row 4's pace, and returns its VmRSS once
// every span was exported and it settled.
func rssAfter(o options, sk *sink, s setup, l *load, log string) (int64, error) {
	col, otlp, pprofAddr, err := startProfiled(o, s, sk, log, o.profile != "")
	if err != nil {
		return 0, err
	}
	defer col.Kill()
	sk.reset()
	if err := sendPaced(otlp, l.requests, groupsEvery, nil); err != nil {
		return 0, fmt.Errorf("%s: %w", s.name, err)
	}
	if err := sk.waitSpans(l.spans, col.Alive); err != nil {
		return 0, fmt.Errorf("%s: %w; its log: %s", s.name, err, col.Log())
	}
	time.Sleep(settle)
	rss, err := harness.ProcessRSS(col.Pid())
	if err != nil {
		return 0, err
	}
	progress("%s: VmRSS %.1f MiB with %d groups sent", s.name, mib(rss), len(l.requests)*groupsPerRequest)
	if pprofAddr != "" {
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

func mib(b int64) float64 { return float64(b) / (1 << 20) }
