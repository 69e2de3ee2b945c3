// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/internal/core/detect"
	"github.com/agentguard/agentguard/internal/core/texpr"
)

// Argument and result predicates narrow `tool:` by the fields of the call's
// arguments and result:
//
//	args: {url: '^https://', retries: 3}      # a string is a regexp; a number, bool or null equality
//	result: {status: {equals: success}}       # or explicit: equals, matches, captured, contains_captured
//	capture: {city: args.city}                # binds the capture dict's city (texpr/dict.go)
//	args: {city: {captured: city}}            # ... which a later predicate compares with
//
// A field is a path of keys separated by dots (a number indexes an array),
// or $ for the whole value (a LangChain tool of one argument gets a bare
// string). A field that is absent never matches. Where each convention
// keeps the arguments and the result, and how they are unwrapped, is in
// callArgs and callResult.

// FieldKind is how a field matcher compares.
type FieldKind int

const (
	// FieldMatches: an RE2 regexp, anchored only as written, searched in a
	// string value, or in the JSON text of any other value.
	FieldMatches FieldKind = iota
	// FieldEquals: the same JSON value (numbers by value: 3 equals 3.0).
	FieldEquals
	// FieldCaptured: the same JSON value as the one bound to a name.
	FieldCaptured
	// FieldContainsCaptured: a string that contains the string bound to a
	// name.
	FieldContainsCaptured
	// FieldDetect: a value a detector finds (a secret, personal data) in
	// the field's strings (detectors.go).
	FieldDetect
	// FieldCompare: a number compared with Bound by Op (lt, le, gt, ge).
	FieldCompare
)

// FieldMatch is one field of args or result and what its value must be.
// Its YAML form is read by decodeFields; the tags only name the parts.
type FieldMatch struct {
	Path    string         `mapstructure:"path"`
	Kind    FieldKind      `mapstructure:"kind"`
	Pattern string         `mapstructure:"matches"` // FieldMatches: the regexp's text
	Equals  texpr.Value    `mapstructure:"equals"`  // FieldEquals: the canonical JSON of the value
	Name    string         `mapstructure:"name"`    // FieldCaptured, FieldContainsCaptured: the capture's name; FieldDetect: the detector's
	Op      string         `mapstructure:"op"`      // FieldCompare: lt, le, gt or ge
	Bound   float64        `mapstructure:"bound"`   // FieldCompare: the number compared with
	re      *regexp.Regexp // FieldMatches
	det     detect.Detector
}

// Fields are the field matchers of args or of result, sorted by path.
type Fields []FieldMatch

// Capture is one binding: Name gets the value at From ("args.PATH",
// "result.PATH", "args" or "result").
type Capture struct {
	Name string `mapstructure:"name"`
	From string `mapstructure:"from"`
}

var matcherKeys = []string{"equals", "matches", "captured", "contains_captured", "detect", "lt", "le", "gt", "ge"}

// decodeFields reads the YAML map of args or result (key is which).
func decodeFields(key string, raw any) (Fields, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		if raw == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: must be a map from field to matcher, got %T %v", key, raw, raw)
	}
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	out := make(Fields, 0, len(paths))
	for _, p := range paths {
		f, err := decodeField(p, m[p])
		if err != nil {
			return nil, fmt.Errorf("%s: field %q: %w", key, p, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func decodeField(path string, raw any) (FieldMatch, error) {
	if err := validPath(path); err != nil {
		return FieldMatch{}, err
	}
	f := FieldMatch{Path: path}
	switch v := raw.(type) {
	case string:
		return f, f.setPattern(v)
	case map[string]any:
		if len(v) != 1 {
			return f, fmt.Errorf("an explicit matcher has exactly one of %s, got %d keys", strings.Join(matcherKeys, ", "), len(v))
		}
		for k, x := range v {
			switch k {
			case "equals":
				f.Kind, f.Equals = FieldEquals, canonicalRaw(x)
				return f, nil
			case "matches":
				s, ok := x.(string)
				if !ok {
					return f, fmt.Errorf("matches: must be a regexp (a string), got %T %v", x, x)
				}
				return f, f.setPattern(s)
			case "lt", "le", "gt", "ge":
				bound, ok := toFloat(x)
				if !ok {
					return f, fmt.Errorf("%s: must be a number, got %T %v", k, x, x)
				}
				f.Kind, f.Op, f.Bound = FieldCompare, k, bound
				return f, nil
			case "detect":
				name, _ := x.(string)
				d, err := lookupDetector(name)
				if err != nil {
					return f, fmt.Errorf("detect: %w", err)
				}
				f.Kind, f.Name, f.det = FieldDetect, name, d
				return f, nil
			case "captured", "contains_captured":
				name, ok := x.(string)
				if !ok || validName(name) != nil || name == "ok" {
					return f, fmt.Errorf("%s: must be a capture name (an identifier), got %v", k, x)
				}
				f.Kind, f.Name = FieldCaptured, name
				if k == "contains_captured" {
					f.Kind = FieldContainsCaptured
				}
				return f, nil
			default:
				return f, fmt.Errorf("unknown matcher %q: valid are %s", k, strings.Join(matcherKeys, ", "))
			}
		}
	case []any:
		return f, fmt.Errorf("a list %v: write {equals: [...]} to compare with a list", v)
	}
	// a number, a boolean or null: equality
	f.Kind, f.Equals = FieldEquals, canonicalRaw(raw)
	return f, nil
}

func (f *FieldMatch) setPattern(s string) error {
	re, err := regexp.Compile(s)
	if err != nil {
		return fmt.Errorf("regexp %q: %w", s, err)
	}
	f.Kind, f.Pattern, f.re = FieldMatches, s, re
	return nil
}

// validPath accepts $ or dot-separated non-empty keys.
func validPath(path string) error {
	if path == "$" {
		return nil
	}
	if path == "" || slices.Contains(strings.Split(path, "."), "") {
		return errors.New("a field is a path of keys separated by dots, or $ for the whole value")
	}
	return nil
}

// decodeCaptures reads capture: {name: from, ...}, sorted by name.
func decodeCaptures(raw any) ([]Capture, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		if raw == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("capture: must be a map from name to args.FIELD or result.FIELD, got %T %v", raw, raw)
	}
	var out []Capture
	for name, x := range m {
		from, ok := x.(string)
		if err := validName(name); err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		if !ok {
			return nil, fmt.Errorf("capture: %s: must be args.FIELD or result.FIELD, got %T %v", name, x, x)
		}
		if _, _, err := splitSource(from); err != nil {
			return nil, fmt.Errorf("capture: %s: %q: %w", name, from, err)
		}
		out = append(out, Capture{Name: name, From: from})
	}
	slices.SortFunc(out, func(a, b Capture) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// splitSource splits args.PATH / result.PATH; args and result alone are
// the whole value.
func splitSource(from string) (result bool, path string, err error) {
	head, path, _ := strings.Cut(from, ".")
	switch head {
	case "args":
	case "result":
		result = true
	default:
		return false, "", errors.New("must start with args or result")
	}
	if path == "" {
		return result, "$", nil
	}
	return result, path, validPath(path)
}

// lookup finds the value at path; false when it is absent.
func lookup(v pcommon.Value, path string) (pcommon.Value, bool) {
	if path == "$" {
		return v, true
	}
	for seg := range strings.SplitSeq(path, ".") {
		switch v.Type() {
		case pcommon.ValueTypeMap:
			x, ok := v.Map().Get(seg)
			if !ok {
				return pcommon.Value{}, false
			}
			v = x
		case pcommon.ValueTypeSlice:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= v.Slice().Len() {
				return pcommon.Value{}, false
			}
			v = v.Slice().At(i)
		default:
			return pcommon.Value{}, false
		}
	}
	return v, true
}

// matchStatic tells whether the value satisfies a matcher that needs no
// dict; the dict matchers only need the field to be there.
func (f *FieldMatch) matchStatic(v pcommon.Value) bool {
	switch f.Kind {
	case FieldMatches:
		if v.Type() == pcommon.ValueTypeStr {
			return f.re.MatchString(v.Str())
		}
		return f.re.MatchString(string(canonical(v)))
	case FieldEquals:
		return canonical(v) == f.Equals
	case FieldContainsCaptured:
		return v.Type() == pcommon.ValueTypeStr
	case FieldDetect:
		_, _, found := detectIn(v, f.det)
		return found
	case FieldCompare:
		return f.compare(v)
	}
	return true
}

// compare reads a number (numberValue) and compares it with the bound.
func (f *FieldMatch) compare(v pcommon.Value) bool {
	x, ok := numberValue(v)
	if !ok {
		return false
	}
	switch f.Op {
	case "lt":
		return x < f.Bound
	case "le":
		return x <= f.Bound
	case "gt":
		return x > f.Bound
	}
	return x >= f.Bound
}

// canonical is a value's JSON text as captures compare it: numbers by
// value (an integral double as an integer), objects with sorted keys.
func canonical(v pcommon.Value) texpr.Value {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return quote(v.Str())
	case pcommon.ValueTypeInt:
		return texpr.Value(strconv.FormatInt(v.Int(), 10))
	case pcommon.ValueTypeDouble:
		return number(v.Double())
	case pcommon.ValueTypeBool:
		return texpr.Value(strconv.FormatBool(v.Bool()))
	case pcommon.ValueTypeEmpty:
		return "null"
	}
	return marshal(normalize(v.AsRaw()))
}

func canonicalRaw(raw any) texpr.Value {
	v := pcommon.NewValueEmpty()
	if err := v.FromRaw(raw); err != nil {
		return marshal(raw)
	}
	return canonical(v)
}

func number(f float64) texpr.Value {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return texpr.Value(strconv.FormatInt(int64(f), 10))
	}
	return texpr.Value(strconv.FormatFloat(f, 'g', -1, 64))
}

// normalize writes integral doubles inside containers as integers.
func normalize(x any) any {
	switch v := x.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return int64(v)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
	}
	return x
}

func quote(s string) texpr.Value { return marshal(s) }

func marshal(x any) texpr.Value {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return texpr.Value(strconv.Quote(fmt.Sprint(x)))
	}
	return texpr.Value(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// unquote is the string a canonical JSON string holds; false for any other
// value.
func unquote(v texpr.Value) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal([]byte(v), &s) != nil {
		return "", false
	}
	return s, true
}

// FieldsText describes args, result and capture after the OTTL of the tool
// condition, for docs, debug logs and warnings:
// ` and args {city: {matches: "^N"}} capturing {city: args.city}`.
func (p *Predicate) FieldsText() string {
	var b strings.Builder
	for _, x := range []struct {
		key    string
		fields Fields
	}{{"args", p.Args}, {"result", p.Result}} {
		if len(x.fields) == 0 {
			continue
		}
		b.WriteString(" and " + x.key + " {")
		for i, f := range x.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Path + ": " + f.String())
		}
		b.WriteString("}")
	}
	if len(p.Capture) > 0 {
		b.WriteString(" capturing {")
		for i, c := range p.Capture {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Name + ": " + c.From)
		}
		b.WriteString("}")
	}
	return b.String()
}

// String is the matcher in its explicit YAML form.
func (f FieldMatch) String() string {
	switch f.Kind {
	case FieldMatches:
		return "{matches: " + strconv.Quote(f.Pattern) + "}"
	case FieldEquals:
		return "{equals: " + string(f.Equals) + "}"
	case FieldCaptured:
		return "{captured: " + f.Name + "}"
	case FieldDetect:
		return "{detect: " + f.Name + "}"
	case FieldCompare:
		return "{" + f.Op + ": " + strconv.FormatFloat(f.Bound, 'g', -1, 64) + "}"
	}
	return "{contains_captured: " + f.Name + "}"
}
