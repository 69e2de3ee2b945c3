// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var badRun = []string{traceFile("adk-weather/adk-bad-43-0.json"), traceFile("adk-weather/adk-bad-43-1.json")}

// --format sarif is a valid SARIF 2.1.0 log: a rule per assertion, a
// result per violation in the trace file it came from, with a fingerprint
// that does not hold trace IDs.
func TestCheckSARIF(t *testing.T) {
	code, out, errOut := runCmd(append([]string{"check", "--format", "sarif", "--config", weatherConfig}, badRun...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (violations)\n%s", code, errOut)
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/sarif-2.1.0-rtm.5.json")
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, out)
	}
	var log sarifDoc
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	results := log.Runs[0].Results
	if len(log.Runs[0].Tool.Driver.Rules) != 3 || len(results) != 2 {
		t.Fatalf("%d rules, %d results; want te1..te3 and te1's two violations", len(log.Runs[0].Tool.Driver.Rules), len(results))
	}
	for _, r := range results {
		if r.RuleID != "te1" || r.Locations[0].PhysicalLocation == nil || !strings.HasSuffix(r.Locations[0].PhysicalLocation.ArtifactLocation.URI, ".json") ||
			len(r.PartialFingerprints["agentguard/v1"]) != 32 {
			t.Errorf("result %+v", r)
		}
	}
	if results[0].PartialFingerprints["agentguard/v1"] == results[1].PartialFingerprints["agentguard/v1"] {
		t.Error("two violations share a fingerprint")
	}
}

// --format junit: a suite per assertion, a case per group, a failure per
// violation, with counts that add up, in the dialect CI reporters read.
func TestCheckJUnit(t *testing.T) {
	code, out, errOut := runCmd(append([]string{"check", "--format", "junit", "--config", weatherConfig}, badRun...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	var doc junitSuites
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	if doc.Tests != 3 || doc.Failures != 1 || len(doc.Suites) != 3 {
		t.Fatalf("%d tests, %d failures, %d suites; want 3 (te1..te3 on one conversation), 1, 3", doc.Tests, doc.Failures, len(doc.Suites))
	}
	te1 := doc.Suites[0]
	if te1.Name != "te1" || te1.Failures != 1 || len(te1.Cases) != 1 || len(te1.Cases[0].Failures) != 2 ||
		!strings.Contains(te1.Cases[0].Failures[0].Text, "Expected xferToWeather at event 3") {
		t.Errorf("te1's suite %+v", te1)
	}
}

// With --baseline (a previous JSON report), a violation already there does
// not fail the run; a new one does; a file that is not a report is an
// input error.
func TestCheckBaseline(t *testing.T) {
	dir := t.TempDir()
	report := func(name string, files ...string) string {
		_, out, _ := runCmd(append([]string{"check", "--format", "json", "--config", weatherConfig}, files...)...)
		path := dir + "/" + name
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	bad := report("bad.json", badRun...)
	good := report("good.json", traceFile("adk-weather/adk-good-42-0.json"), traceFile("adk-weather/adk-good-42-1.json"))

	code, out, errOut := runCmd(append([]string{"check", "--baseline", bad, "--config", weatherConfig}, badRun...)...)
	if code != 0 || !strings.Contains(out, "[known]") || !strings.Contains(out, "2 violations (te1: 2), 0 new since the baseline") {
		t.Errorf("the same violations as the baseline: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCmd(append([]string{"check", "--baseline", good, "--config", weatherConfig}, badRun...)...)
	if code != 1 || !strings.Contains(out, "[new]") || !strings.Contains(out, "2 new since the baseline") {
		t.Errorf("violations new since the baseline: exit %d\n%s", code, out)
	}
	code, _, errOut = runCmd(append([]string{"check", "--baseline", weatherConfig, "--config", weatherConfig}, badRun...)...)
	if code != 2 || !strings.Contains(errOut, "is not a report of check --format json") {
		t.Errorf("a baseline that is no report: exit %d\n%s", code, errOut)
	}
}
