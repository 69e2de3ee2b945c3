// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// check's SARIF 2.1.0 output (--format sarif), for code-scanning UIs: the
// assertions are the rules, each violation a result located in the trace
// file its deciding span came from, at its group and event. A result's
// fingerprint is made of what survives recording the same conversation
// again (the assertion, the group key, the deciding span's name and the
// event numbers), not of trace IDs or times.

const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	toolURI      = "https://github.com/agentguard/agentguard"
)

type sarifDoc struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	ShortDescription sarifText `json:"shortDescription"`
	FullDescription  sarifText `json:"fullDescription"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifLog is the report's violations as a SARIF log.
func sarifLog(rep *checkReport) sarifDoc {
	driver := sarifDriver{Name: "agentguard check", InformationURI: toolURI, Rules: []sarifRule{}}
	index := map[string]int{}
	for _, a := range rep.Assertions {
		index[a.Name] = len(driver.Rules)
		what := a.Kind + ": " + a.Expression
		if a.Pattern != "" {
			what = a.Pattern + " (" + what + ")"
		}
		driver.Rules = append(driver.Rules, sarifRule{ID: a.Name, Name: a.Name,
			ShortDescription: sarifText{"temporal assertion " + a.Name}, FullDescription: sarifText{what}})
	}
	results := []sarifResult{}
	for _, f := range rep.Findings {
		if f.Label != "fail" {
			continue
		}
		results = append(results, sarifFinding(f, index[f.Assertion], rep.fileOf[f.TraceID]))
	}
	return sarifDoc{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{{Tool: sarifTool{driver}, Results: results}}}
}

// sarifFinding is one violation as a SARIF result.
func sarifFinding(f finding, rule int, file string) sarifResult {
	where := fmt.Sprintf("%s, events %d-%d", f.Group, f.StartEvent, f.EndEvent)
	loc := sarifLocation{LogicalLocations: []sarifLogical{{Name: f.SpanName, Kind: "member",
		FullyQualifiedName: fmt.Sprintf("group %s/event %d/%s", f.Group, f.EndEvent, f.SpanName)}}}
	if file != "" {
		loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: file}}
	}
	props := map[string]any{"group": f.Group, "start_event": f.StartEvent, "end_event": f.EndEvent,
		"trace_id": f.TraceID, "span_id": f.SpanID}
	if f.History != "" {
		props["history"] = f.History
	}
	return sarifResult{RuleID: f.Assertion, RuleIndex: rule, Level: "error",
		Message:             sarifText{fmt.Sprintf("%s violated in %s: %s", f.Assertion, where, f.Explanation)},
		Locations:           []sarifLocation{loc},
		PartialFingerprints: map[string]string{"agentguard/v1": fingerprint(f)},
		Properties:          props}
}

// fingerprint identifies a violation across recordings of the same
// conversation: the assertion, the group key, the deciding span's name and
// where in the group it fell.
func fingerprint(f finding) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{f.Assertion, f.Group, f.SpanName,
		fmt.Sprint(f.StartEvent), fmt.Sprint(f.EndEvent)}, "\x00")))
	return hex.EncodeToString(sum[:16])
}
