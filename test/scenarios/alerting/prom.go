// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// promAPI is the running Prometheus's HTTP API.
type promAPI struct{ base string }

// get decodes the data of a successful API answer into out.
func (p promAPI) get(path string, params url.Values, out any) error {
	resp, err := http.Get(p.base + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeAPI(resp, out)
}

func decodeAPI(resp *http.Response, out any) error {
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %w", resp.Request.URL, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s", resp.Request.URL.Path, body.Error)
	}
	return json.Unmarshal(body.Data, out)
}

// series is how many series expr returns now.
func (p promAPI) series(expr string) (int, error) {
	var data struct {
		Result []json.RawMessage `json:"result"`
	}
	err := p.get("/api/v1/query", url.Values{"query": {expr}}, &data)
	return len(data.Result), err
}

// exemplarsAt follows a trace link (a query_exemplars URL) and returns the
// trace and span IDs it lists.
func exemplarsAt(link string) ([][2]string, error) {
	resp, err := http.Get(link)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var data []struct {
		Exemplars []struct {
			Labels map[string]string `json:"labels"`
		} `json:"exemplars"`
	}
	if err := decodeAPI(resp, &data); err != nil {
		return nil, err
	}
	var out [][2]string
	for _, s := range data {
		for _, e := range s.Exemplars {
			out = append(out, [2]string{e.Labels["trace_id"], e.Labels["span_id"]})
		}
	}
	return out, nil
}

// names are the metric names Prometheus has.
func (p promAPI) names() ([]string, error) {
	var out []string
	err := p.get("/api/v1/label/__name__/values", nil, &out)
	return out, err
}

// dashboardExprs are the PromQL expressions of the dashboard's panels,
// with Grafana's range variables given this run's values.
func dashboardExprs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	vars := strings.NewReplacer("$__rate_interval", "1m", "$__range", "5m", "$__interval", "5s")
	var out []string
	for _, panel := range d.Panels {
		for _, t := range panel.Targets {
			out = append(out, vars.Replace(t.Expr))
		}
	}
	return out, nil
}

// metricName matches the names of agentguard's and the collector's metrics
// in an expression.
var metricName = regexp.MustCompile(`\b(?:otelcol|agentguard)_[a-z_]+\b`)

// documentedNames are the self-metric names of the components'
// documentation.md files, and the verdict metrics' Prometheus names.
func documentedNames(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "*", "*", "documentation.md"))
	if err != nil {
		return nil, err
	}
	names := []string{"agentguard_verdicts_total", "agentguard_p_safe_bucket", "agentguard_p_safe_sum", "agentguard_p_safe_count"}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range regexp.MustCompile(`(?m)^### (\S+)`).FindAllStringSubmatch(string(b), -1) {
			names = append(names, m[1])
		}
	}
	return names, nil
}

// nameRegex matches a selector by name pattern, {__name__=~"..."}.
var nameRegex = regexp.MustCompile(`__name__=~"([^"]+)"`)

// alternation matches the innermost group of alternatives, (a|b).
var alternation = regexp.MustCompile(`\(([^()]*)\)`)

// expandNames writes each name pattern of expr (groups of alternatives
// only, as the rules and the dashboard use them) as the names it matches.
func expandNames(expr string) string {
	return nameRegex.ReplaceAllStringFunc(expr, func(sel string) string {
		patterns := []string{nameRegex.FindStringSubmatch(sel)[1]}
		for done := false; !done; {
			done = true
			var next []string
			for _, p := range patterns {
				loc := alternation.FindStringSubmatchIndex(p)
				if loc == nil {
					next = append(next, p)
					continue
				}
				done = false
				for _, alt := range strings.Split(p[loc[2]:loc[3]], "|") {
					next = append(next, p[:loc[0]]+alt+p[loc[1]:])
				}
			}
			patterns = next
		}
		return strings.Join(patterns, " ")
	})
}

// unknownNames are the metric names of exprs that Prometheus does not have
// and no component documents: a typo, which an `or vector(0)` would hide.
func unknownNames(exprs, known []string) []string {
	var out []string
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(expandNames(e), -1) {
			if !slices.Contains(known, n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}
