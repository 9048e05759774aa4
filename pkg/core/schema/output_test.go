package schema

import (
	"encoding/json"
	"testing"
)

func TestOutputKeepsStructureAndBoundsDropsProse(t *testing.T) {
	in := S{"type": "object", "additionalProperties": false, "description": "A thing.", "required": []string{"id", "description"},
		"properties": map[string]any{
			// A property may be called description; only the keyword goes.
			"description": S{"type": "string", "maxLength": 100, "description": "Its summary."},
			"id":          S{"type": "string", "pattern": IDPattern, "description": "Its id."},
			"kids":        S{"type": "array", "items": S{"$ref": "#/$defs/kid"}, "maxItems": 5, "description": "Children."},
			"kind":        S{"type": "string", "enum": []string{"a", "b"}, "description": "Kind."},
			"at":          S{"type": "integer", "minimum": 0, "maximum": 1 << 53, "description": "Unix ms."},
			"delta":       S{"type": "integer", "minimum": -(1 << 53), "maximum": 1 << 40, "description": "Change."},
		},
		"$defs": map[string]any{"kid": S{"type": "object", "additionalProperties": false, "description": "A kid.", "required": []string{"n"},
			"properties": map[string]any{"n": S{"type": "integer", "minimum": 0, "maximum": 9, "description": "Count."}}}},
	}
	got, _ := json.Marshal(Output(in))
	want := `{"$defs":{"kid":{"additionalProperties":false,"properties":{"n":{"maximum":9,"minimum":0,"type":"integer"}},"required":["n"],"type":"object"}},` +
		`"additionalProperties":false,"properties":{"at":{"minimum":0,"type":"integer"},"delta":{"maximum":1099511627776,"minimum":-9007199254740992,"type":"integer"},"description":{"maxLength":100,"type":"string"},"id":{"maxLength":32,"minLength":32,"type":"string"},` +
		`"kids":{"items":{"$ref":"#/$defs/kid"},"maxItems":5,"type":"array"},"kind":{"enum":["a","b"],"type":"string"}},"required":["id","description"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("Output:\n got %s\nwant %s", got, want)
	}
	if p := CheckResultSubset(JSON(Output(in))); p != nil {
		t.Fatalf("Output left the result subset: %v", p)
	}
	if _, ok := in["description"]; !ok {
		t.Fatal("Output modified its argument")
	}
}

// TestIDPatternFixesLength: an id states its pattern only in an input
// schema, the subset accepts it as bounded, and a result states its length.
func TestIDPatternFixesLength(t *testing.T) {
	type withID struct {
		ID string `json:"id" schema:"id"`
	}
	s, err := For[withID](Vocabulary{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(s["properties"].(map[string]any)["id"]); string(got) != `{"pattern":"^[0-9a-f]{32}$","type":"string"}` {
		t.Fatalf("id: %s", got)
	}
	if p := CheckSubset(JSON(s)); p != nil {
		t.Fatalf("id outside the subset: %v", p)
	}
	if got, _ := json.Marshal(Output(s)["properties"].(map[string]any)["id"]); string(got) != `{"maxLength":32,"minLength":32,"type":"string"}` {
		t.Fatalf("result id: %s", got)
	}
}
