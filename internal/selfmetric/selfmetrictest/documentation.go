// SPDX-License-Identifier: Apache-2.0

package selfmetrictest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Documentation renders documentation.md from metadata.yaml in mdatagen's
// format: per metric, in name order, its description, a table of its unit,
// type, value type, monotonicity and stability, and a table of its attributes
// with their values.
func Documentation(md *Metadata, regenerate string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[comment]: <> (Generated from metadata.yaml by %s. DO NOT EDIT.)\n\n", regenerate)
	fmt.Fprintf(&b, "# %s\n\n## Internal Telemetry\n\nThe following telemetry is emitted by this component.\n", md.Type)
	for _, key := range sortedKeys(md.Telemetry.Metrics) {
		m := md.Telemetry.Metrics[key]
		fmt.Fprintf(&b, "\n### otelcol_%s\n\n%s\n\n", key, m.Description)
		if m.Sum != nil {
			b.WriteString("| Unit | Metric Type | Value Type | Monotonic | Stability |\n")
			b.WriteString("| ---- | ----------- | ---------- | --------- | --------- |\n")
			fmt.Fprintf(&b, "| %s | %s | %s | %t | %s |\n", *m.Unit, title(m.kind()), title(m.valueType()), *m.Sum.Monotonic, title(m.Stability))
		} else {
			b.WriteString("| Unit | Metric Type | Value Type | Stability |\n")
			b.WriteString("| ---- | ----------- | ---------- | --------- |\n")
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", *m.Unit, title(m.kind()), title(m.valueType()), title(m.Stability))
		}
		if len(m.Attributes) == 0 {
			continue
		}
		b.WriteString("\n#### Attributes\n\n")
		b.WriteString("| Name | Description | Values | Semantic Convention |\n")
		b.WriteString("| ---- | ----------- | ------ | ------------------- |\n")
		for _, name := range m.Attributes {
			a := md.Attributes[name]
			fmt.Fprintf(&b, "| %s | %s | %s | - |\n", name, cell(a.Description), values(a))
		}
	}
	return b.String()
}

// CheckDocumentation fails t if the file at path is not metadata.yaml's
// documentation; with update it writes it instead.
func CheckDocumentation(t *testing.T, md *Metadata, path, regenerate string, update bool) {
	t.Helper()
	want := Documentation(md, regenerate)
	if update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate it: %s)", err, regenerate)
	}
	if string(got) != want {
		t.Errorf("%s is not metadata.yaml's documentation; regenerate it: %s", path, regenerate)
	}
}

// values is mdatagen's Values cell: "Any Str", or the enum's values.
func values(a Attribute) string {
	typ := map[string]string{"string": "Str", "int": "Int", "double": "Double", "bool": "Bool"}[a.Type]
	if len(a.Enum) == 0 {
		return "Any " + typ
	}
	quoted := make([]string, len(a.Enum))
	for i, v := range a.Enum {
		quoted[i] = "``" + v + "``"
	}
	return typ + ": " + strings.Join(quoted, ", ")
}

// cell escapes what would end a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
