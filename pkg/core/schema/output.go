// Package schema derives operation JSON Schemas from Go types (derive.go),
// renders result schemas (Output) and checks schemas against notebridge's
// supported subset of JSON Schema draft 2019-09 (docs/schema-subset.md).
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

// IDLength is the length of a Joplin object id.
const IDLength = 32

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
