// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/extension/riskendpoint/riskendpointtest"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// noDecider answers every question at once: the endpoint's own cost.
type noDecider struct{}

func (noDecider) Decide(context.Context, riskendpoint.Question) (riskendpoint.Answer, error) {
	return riskendpoint.Answer{Open: true}, nil
}

// BenchmarkDecision: concurrent callers asking over HTTP on loopback about
// 200 open conversations of the conversation configuration (three turns
// each), beside the same endpoint with a decider that answers at once, in
// the same run. p50 and p99 are per question, as the caller sees them.
func BenchmarkDecision(b *testing.B) {
	const groups = 200
	b.Run("noop", func(b *testing.B) {
		ext, url := riskendpointtest.Start(b)
		defer ext.(riskendpoint.Registry).Register("noop", noDecider{})()
		askConcurrently(b, url, groups)
	})
	b.Run("temporalcheck", func(b *testing.B) {
		p, clock, url := asker(b, "deny")
		for g := range groups {
			conv := fmt.Sprintf("c%d", g)
			feed(b, p, fixtures.StoveTrace(3*g, conv, fixtures.ToolCall{Tool: "transfer_to_greeting_agent"}, fixtures.ToolCall{Tool: "say_hello"}),
				fixtures.StoveTrace(3*g+1, conv, fixtures.ToolCall{Tool: "get_weather"}),
				fixtures.StoveTrace(3*g+2, conv, fixtures.ToolCall{Tool: "transfer_to_greeting_agent"}))
		}
		clock.t = clock.t.Add(time.Minute) // past wait, within group_timeout
		p.Tick(clock.t)
		if n := p.OpenGroups(); n != groups {
			b.Fatalf("%d groups open, want %d", n, groups)
		}
		askConcurrently(b, url, groups)
	})
}

func askConcurrently(b *testing.B, url string, groups int) {
	var mu sync.Mutex
	var took []time.Duration
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for i := 0; pb.Next(); i++ {
			start := time.Now()
			resp, err := client.Post(fmt.Sprintf("%s/v1/groups/c%d/decisions", url, i%groups), "application/json",
				strings.NewReader(`{"action": {"tool": "get_weather", "arguments": {"city": "Paris"}}}`))
			if err != nil {
				b.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		took = append(took, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}
