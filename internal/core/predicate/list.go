// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/confmap"
)

// List is the predicates in bit order. In YAML it is a list of named entries
// (declaration order is bit order), or a map from name to predicate
// (`sayHello: {tool: say_hello}`, `slow: '<OTTL>'`), whose bits follow the
// names sorted, since a YAML map has no order.
type List []Named

var _ confmap.Unmarshaler = (*List)(nil)

// Unmarshal takes the map form; confmap decodes the list form itself, entry
// by entry through Named.Unmarshal.
func (l *List) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make(List, 0, len(names))
	for _, name := range names {
		p, err := decodePredicate(raw[name])
		if err != nil {
			return fmt.Errorf("predicate %q: %w", name, err)
		}
		out = append(out, Named{Name: name, Predicate: p})
	}
	*l = out
	return nil
}
