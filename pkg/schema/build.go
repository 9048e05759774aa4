// Package schema builds operation JSON Schemas as data and checks them
// against notebridge's supported subset of JSON Schema draft 2019-09
// (docs/schema-subset.md).
package schema

import (
	"encoding/json"
	"fmt"
)

// S is one JSON Schema node. encoding/json sorts map keys, so the encoded
// form of an S is deterministic.
type S = map[string]any

// IDPattern matches a Joplin object id: 32 lowercase hex characters.
const IDPattern = "^[0-9a-f]{32}$"

// Object returns a closed object schema. Every name in required must be a key
// of props.
func Object(desc string, props map[string]any, required ...string) S {
	s := S{"type": "object", "properties": props, "additionalProperties": false}
	if desc != "" {
		s["description"] = desc
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// The builders below take a description first; an empty one is left out,
// for fields whose name and bounds already say everything.

// String returns a string schema bounded to maxLen characters.
func String(desc string, minLen, maxLen int) S {
	s := described(S{"type": "string", "maxLength": maxLen}, desc)
	if minLen > 0 {
		s["minLength"] = minLen
	}
	return s
}

// Matching returns a string schema bounded to maxLen characters that must
// match pattern.
func Matching(desc string, minLen, maxLen int, pattern string) S {
	s := String(desc, minLen, maxLen)
	s["pattern"] = pattern
	return s
}

// Bounded returns a string schema bounded by pattern alone: an anchored
// pattern without unbounded repetition (CheckSubset enforces this), so a
// length bound beside it would only repeat it.
func Bounded(desc, pattern string) S {
	return described(S{"type": "string", "pattern": pattern}, desc)
}

// IDLength is the length of a Joplin object id.
const IDLength = 32

// ID returns a schema for a Joplin object id; Output renders it as a
// string of IDLength characters.
func ID(desc string) S {
	return Bounded(desc, IDPattern)
}

// Enum returns a string schema limited to values.
func Enum(desc string, values ...string) S {
	return described(S{"type": "string", "enum": values}, desc)
}

// Integer returns an integer schema bounded to [min, max].
func Integer(desc string, min, max int64) S {
	return described(S{"type": "integer", "minimum": min, "maximum": max}, desc)
}

// Bool returns a boolean schema.
func Bool(desc string) S {
	return described(S{"type": "boolean"}, desc)
}

// Array returns an array schema of at most maxItems items.
func Array(desc string, items S, maxItems int) S {
	return described(S{"type": "array", "items": items, "maxItems": maxItems}, desc)
}

// Default records the value an omitted argument takes, as the JSON Schema
// annotation default (validators do not apply it; the handler does).
func Default(s S, v any) S {
	s["default"] = v
	return s
}

func described(s S, desc string) S {
	if desc != "" {
		s["description"] = desc
	}
	return s
}

// Nullable widens a schema's type to also accept null.
func Nullable(s S) S {
	out := S{}
	for k, v := range s {
		out[k] = v
	}
	out["type"] = []string{fmt.Sprint(s["type"]), "null"}
	return out
}

// Ref returns a local reference to a $defs entry.
func Ref(name string) S {
	return S{"$ref": "#/$defs/" + name}
}

// JSON encodes s. It panics on a schema that cannot be encoded, which is a
// programming error in a static definition.
func JSON(s S) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("schema: encode: %v", err))
	}
	return b
}

// proseKeywords are the annotation keywords Output drops: a result schema
// states structure and bounds; what a field means belongs in the input
// schema or the tool description, said once.
var proseKeywords = map[string]bool{
	"description": true, "title": true, "examples": true, "default": true, "$comment": true, "pattern": true,
}

// safeInteger is 2^53: JSON numbers beyond it lose precision in most
// clients, so a bound at or past it tells a client nothing.
const safeInteger = 1 << 53

// Output renders s as a result schema: a deep copy without prose and
// without patterns (a result is produced by the server, not parsed from a
// caller), keeping types, properties, required, additionalProperties,
// items, enums and bounds. An id's pattern becomes its fixed length, and
// an integer maximum at or beyond 2^53 is left out (CheckResultSubset).
func Output(s S) S {
	var generic map[string]any
	if err := json.Unmarshal(JSON(s), &generic); err != nil {
		panic(fmt.Sprintf("schema: decode: %v", err))
	}
	return outputNode(generic).(S)
}

func outputNode(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(S, len(t))
		if t["pattern"] == IDPattern {
			out["minLength"], out["maxLength"] = IDLength, IDLength
		}
		for k, x := range t {
			switch {
			case proseKeywords[k]:
			case k == "maximum" && x.(float64) >= safeInteger:
			case k == "properties" || k == "$defs":
				named := make(map[string]any, len(x.(map[string]any)))
				for name, sub := range x.(map[string]any) {
					named[name] = outputNode(sub)
				}
				out[k] = named
			default:
				out[k] = outputNode(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = outputNode(x)
		}
		return out
	}
	return v
}
