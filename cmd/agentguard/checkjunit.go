// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/xml"
	"fmt"
	"io"
)

// check's JUnit XML output (--format junit), for every CI's test report: a
// test suite per assertion, a test case per group it judged, failed with
// the explanation of each violation in that group. The dialect is the one
// Jenkins, GitLab, GitHub Actions' reporters and Surefire read: testsuites
// > testsuite (name, tests, failures) > testcase (classname, name) >
// failure (message, type, text).

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failures  []junitFailed `xml:"failure"`
}

type junitFailed struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// writeJUnit writes the report as JUnit XML.
func writeJUnit(w io.Writer, rep *checkReport) error {
	failed := map[[2]string][]finding{}
	for _, f := range rep.Findings {
		if f.Label == "fail" {
			k := [2]string{f.Assertion, f.Group}
			failed[k] = append(failed[k], f)
		}
	}
	doc := junitSuites{Name: "agentguard check"}
	for _, a := range rep.Assertions {
		suite := junitSuite{Name: a.Name}
		for _, g := range rep.groups {
			c := junitCase{ClassName: "agentguard." + a.Name, Name: g}
			for _, f := range failed[[2]string{a.Name, g}] {
				c.Failures = append(c.Failures, junitFailed{Type: f.Verdict,
					Message: fmt.Sprintf("%s violated at events %d-%d (%s)", a.Name, f.StartEvent, f.EndEvent, f.SpanName),
					Text:    f.Explanation})
			}
			suite.Tests++
			if len(c.Failures) > 0 {
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, c)
		}
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Suites = append(doc.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
