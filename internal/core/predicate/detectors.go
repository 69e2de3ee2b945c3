// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/internal/core/detect"
)

// The detectors (package detect: API keys, private keys, card numbers,
// IBANs, emails, phone numbers) reach predicates three ways: a field
// matcher of args or result ({detect: card_number}), an OTTL converter over
// any attribute (Detect(span.attributes["gen_ai.prompt"], "api_key")), and
// the values a flow follows from one call to a later one (flows.go).

// detectIn finds a value of d in v: in each string it holds (so that the
// JSON escapes of a key's newlines do not hide it) and in the JSON text of
// each other scalar (a card number written as a number).
func detectIn(v pcommon.Value, d detect.Detector) (value, detector string, ok bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return d.Find(v.Str())
	case pcommon.ValueTypeMap:
		for _, x := range v.Map().All() {
			if value, detector, ok = detectIn(x, d); ok {
				return value, detector, ok
			}
		}
		return "", "", false
	case pcommon.ValueTypeSlice:
		for _, x := range v.Slice().All() {
			if value, detector, ok = detectIn(x, d); ok {
				return value, detector, ok
			}
		}
		return "", "", false
	}
	return d.Find(string(canonical(v)))
}

// lookupDetector is the detector called name, or the error that lists the
// valid names.
func lookupDetector(name string) (detect.Detector, error) {
	d, ok := detect.Lookup(name)
	if !ok {
		return d, detect.Unknown(name)
	}
	return d, nil
}

// mask shows a detected value without giving it away: its detector, its
// length and its last two characters. A note or an explanation lands in
// span attributes and log records, which must not carry the secret.
func mask(value, detector string) string {
	tail := value
	if len(tail) > 2 {
		tail = tail[len(tail)-2:]
	}
	return fmt.Sprintf("%s of %d characters ending %q", detector, len(value), tail)
}

const detectName = "Detect"

type detectArgs struct {
	Target   ottl.Getter[*ottlspan.TransformContext]
	Detector string
}

// detectFactory is the OTTL converter Detect(target, "name"): true where
// the target's text holds a value the detector finds.
func detectFactory() ottl.Factory[*ottlspan.TransformContext] {
	return ottl.NewFactory(detectName, &detectArgs{}, func(_ ottl.FunctionContext, a ottl.Arguments) (ottl.ExprFunc[*ottlspan.TransformContext], error) {
		args, ok := a.(*detectArgs)
		if !ok {
			return nil, errors.New("the Detect converter's arguments must be of type *detectArgs")
		}
		d, err := lookupDetector(args.Detector)
		if err != nil {
			return nil, fmt.Errorf("converter Detect: %w", err)
		}
		return func(ctx context.Context, tCtx *ottlspan.TransformContext) (any, error) {
			target, err := args.Target.Get(ctx, tCtx)
			if err != nil || target == nil {
				return false, err // an absent attribute holds nothing
			}
			v := pcommon.NewValueEmpty()
			if err := v.FromRaw(rawOf(target)); err != nil {
				_, _, found := d.Find(fmt.Sprint(target))
				return found, nil
			}
			_, _, found := detectIn(v, d)
			return found, nil
		}, nil
	})
}

// rawOf is what an OTTL getter returned, as pcommon.Value.FromRaw takes it.
func rawOf(x any) any {
	switch v := x.(type) {
	case pcommon.Value:
		return v.AsRaw()
	case pcommon.Map:
		return v.AsRaw()
	case pcommon.Slice:
		return v.AsRaw()
	}
	return x
}
