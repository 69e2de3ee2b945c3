// SPDX-License-Identifier: Apache-2.0

// Package docs_test holds docs/configuration.md to the components' Config
// structs, so that the reference cannot drift from the code: every field a
// configuration can set is documented once under its component, and every
// field documented exists.
package docs_test

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/connector/verdictlogs"
	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/processor/probguard"
	"github.com/agentguard/agentguard/processor/temporalcheck"
)

const ownModule = "github.com/agentguard/agentguard/"

// ownForm are the structs whose YAML form is not their fields, read by an
// Unmarshal of their own or their parent's: args and result are maps from
// field path to matcher, capture a map from name to path, property a
// keyword or a one-key map.
var ownForm = []reflect.Type{reflect.TypeFor[predicate.FieldMatch](), reflect.TypeFor[predicate.Capture](), reflect.TypeFor[probguard.Property]()}

func TestConfigurationReferenceMatchesTheStructs(t *testing.T) {
	documented := documentedFields(t, "configuration.md")
	for _, c := range []struct {
		name string
		cfg  component.Config
	}{
		{"temporalcheck", temporalcheck.NewFactory().CreateDefaultConfig()},
		{"probguard", probguard.NewFactory().CreateDefaultConfig()},
		{"verdictlogs", verdictlogs.NewFactory().CreateDefaultConfig()},
		{"riskendpoint", riskendpoint.NewFactory().CreateDefaultConfig()},
	} {
		fields, foreign := configFields(reflect.TypeOf(c.cfg), "", nil)
		docs := documented[c.name]
		for _, f := range fields {
			if n := count(docs, f); n != 1 {
				t.Errorf("configuration.md, section %s: field `%s` documented %d times, want once", c.name, f, n)
			}
		}
		for _, d := range docs {
			if !slices.Contains(fields, d) && !under(d, foreign) {
				t.Errorf("configuration.md, section %s: `%s` is not a field of the configuration", c.name, d)
			}
		}
	}
}

// documentedFields reads the first column of each section's table: the
// field paths in backticks, by the section's heading.
func documentedFields(t *testing.T, path string) map[string][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([^`]+)` \\|")
	out := map[string][]string{}
	section := ""
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.TrimSpace(name)
		} else if m := row.FindStringSubmatch(line); m != nil && section != "" {
			out[section] = append(out[section], m[1])
		}
	}
	return out
}

// configFields lists the paths a configuration can set, as confmap reads
// them from the mapstructure tags: squashed structs at their parent's level,
// agentguard's own nested structs (and lists of them, as NAME[].) field by
// field. Fields of another module's struct are listed as one path each, in
// foreign, under which the reference may go into detail. A struct inside
// itself (a latched predicate's set and reset are predicates) is one field,
// and so is one whose YAML form is not its fields (ownForm).
func configFields(t reflect.Type, prefix string, within []reflect.Type) (fields, foreign []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	within = append(within, t)
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if opts == "squash" {
			sub, subForeign := configFields(f.Type, prefix, within)
			fields, foreign = append(fields, sub...), append(foreign, subForeign...)
			continue
		}
		if name == "" {
			continue
		}
		path := prefix + name
		fields = append(fields, path)
		inner, list := element(f.Type)
		switch {
		case inner.Kind() != reflect.Struct || slices.Contains(within, inner) || slices.Contains(ownForm, inner):
		case !strings.HasPrefix(inner.PkgPath(), ownModule):
			foreign = append(foreign, path)
		case list:
			sub, subForeign := configFields(inner, path+"[].", within)
			fields, foreign = append(fields, sub...), append(foreign, subForeign...)
		default:
			sub, subForeign := configFields(inner, path+".", within)
			fields, foreign = append(fields, sub...), append(foreign, subForeign...)
		}
	}
	return fields, foreign
}

// element is the struct a field holds: through pointers, and the element of
// a slice (list true).
func element(t reflect.Type) (reflect.Type, bool) {
	list := false
	for {
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
		case reflect.Slice:
			t, list = t.Elem(), true
		default:
			return t, list
		}
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// under reports whether path goes into a foreign field's detail.
func under(path string, foreign []string) bool {
	for _, f := range foreign {
		if strings.HasPrefix(path, f+".") || strings.HasPrefix(path, f+"[].") {
			return true
		}
	}
	return false
}
