// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"slices"
	"time"
)

// episodeEvery paces row 5: a load far below what saturates the collector,
// so that the latency is the pipeline's, not a queue's.
const episodeEvery = 20 * time.Millisecond

// Row 5 waits for records until none came for recordsQuiet, at most
// recordsLimit after the last span was exported.
const (
	recordsQuiet = 2 * time.Second
	recordsLimit = 30 * time.Second
)

// warningEpisodes are the recorded episodes probguard warns on as the
// household example is shipped: ep-001 (the stove left on while the
// groceries come in: one record) and ep-004 (a warning, then the violation
// when the house becomes unsafe: two). ep-010, which turns the stove off
// before leaving, has no verdict.
func warningEpisodes() []string { return []string{"ep-001", "ep-004"} }

// logLatency is row 5: the household example as shipped, episodes sent one
// every episodeEvery; each verdict log record's latency is from the send of
// the request holding its trace to the record's arrival at the sink.
func logLatency(o options, sk *sink) (result, error) {
	l, err := householdLoad(o.n, warningEpisodes())
	if err != nil {
		return result{}, err
	}
	col, otlp, err := start(o, householdSetup(), sk, "latency.log")
	if err != nil {
		return result{}, err
	}
	defer col.Kill()
	sk.reset()
	if err := sendPaced(otlp, l.requests, episodeEvery, func(i int) { sk.sending(l.traceIDs[i], time.Now()) }, nil); err != nil {
		return result{}, err
	}
	if err := sk.waitSpans(l.spans, col.Alive); err != nil {
		return result{}, fmt.Errorf("%w; its log: %s", err, col.Log())
	}
	sk.waitRecordsQuiet(recordsQuiet, recordsLimit)
	lat, records := sk.recordLatencies()
	if len(lat) == 0 {
		return result{}, fmt.Errorf("no verdict log record of the %d episodes sent came (%d records in all); the collector's log: %s",
			len(l.requests), records, col.Log())
	}
	slices.Sort(lat)
	p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
	figure := fmt.Sprintf("p50 %v, p99 %v, %d records of %d episodes sent %v apart",
		ms(p50), ms(p99), len(lat), len(l.requests), episodeEvery)
	if records != len(lat) {
		figure += fmt.Sprintf(" (%d more records of traces not sent)", records-len(lat))
	}
	return result{
		row:     5,
		measure: "span → verdict log record latency, household as shipped",
		figure:  figure,
		goal:    "p99 ≤ 20 ms",
		met:     p99 <= 20*time.Millisecond,
	}, nil
}

// percentile is the nearest-rank p-quantile of sorted, not empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ms rounds d for the table: to 0.1 ms.
func ms(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
