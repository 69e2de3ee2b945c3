// SPDX-License-Identifier: Apache-2.0

package selfmetrictest

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Check loads metadata.yaml and fails t on each disagreement with c.
func Check(t *testing.T, path string, c Component) *Metadata {
	t.Helper()
	md, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Diff(md, c) {
		t.Error(d)
	}
	return md
}

// CheckRecorded fails t on each way rm, collected from a component that ran,
// disagrees with metadata.yaml (see RecordedDiff).
func CheckRecorded(t testing.TB, path, scope string, rm metricdata.ResourceMetrics) {
	t.Helper()
	md, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range RecordedDiff(md, scope, rm) {
		t.Error(d)
	}
}

// WarningsDiff lists the warnings of metadata.yaml the README does not
// explain the way contrib's READMEs do: a bullet under "## Warnings" that
// links the warning to the collector's standard-warnings.md.
func WarningsDiff(md *Metadata, readme string) []string {
	var out []string
	section := regexp.MustCompile(`(?s)\n## Warnings\n(.*?)(\n## |\z)`).FindStringSubmatch(readme)
	if section == nil {
		if len(md.Status.Warnings) > 0 {
			out = append(out, fmt.Sprintf("README: no \"## Warnings\" section for %q", md.Status.Warnings))
		}
		return out
	}
	for _, w := range md.Status.Warnings {
		bullet := regexp.MustCompile(`(?m)^- \[` + regexp.QuoteMeta(w) + `\]\(https://github\.com/open-telemetry/opentelemetry-collector/blob/main/docs/standard-warnings\.md#[a-z-]+\): \S`)
		if !bullet.MatchString(section[1]) {
			out = append(out, fmt.Sprintf("README: warning %q has no bullet \"- [%s](…standard-warnings.md#…): why\" under ## Warnings", w, w))
		}
	}
	return out
}

// CheckWarnings fails t on each warning of metadata.yaml the README at
// readmePath does not explain.
func CheckWarnings(t *testing.T, md *Metadata, readmePath string) {
	t.Helper()
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range WarningsDiff(md, string(readme)) {
		t.Error(d)
	}
}
