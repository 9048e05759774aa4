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

// String returns a string schema bounded to maxLen characters.
func String(desc string, minLen, maxLen int) S {
	s := S{"type": "string", "maxLength": maxLen, "description": desc}
	if minLen > 0 {
		s["minLength"] = minLen
	}
	return s
}

// ID returns a schema for a Joplin object id.
func ID(desc string) S {
	return S{"type": "string", "minLength": 32, "maxLength": 32, "pattern": IDPattern, "description": desc}
}

// Enum returns a string schema limited to values.
func Enum(desc string, values ...string) S {
	return S{"type": "string", "enum": values, "description": desc}
}

// Integer returns an integer schema bounded to [min, max].
func Integer(desc string, min, max int64) S {
	return S{"type": "integer", "minimum": min, "maximum": max, "description": desc}
}

// Bool returns a boolean schema.
func Bool(desc string) S {
	return S{"type": "boolean", "description": desc}
}

// Array returns an array schema of at most maxItems items.
func Array(desc string, items S, maxItems int) S {
	return S{"type": "array", "items": items, "maxItems": maxItems, "description": desc}
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
