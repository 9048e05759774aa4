package schema

import (
	"encoding/json"
	"testing"
)

func TestOutputKeepsStructureAndBoundsDropsProse(t *testing.T) {
	in := Object("A thing.", map[string]any{
		// A property may be called description; only the keyword goes.
		"description": String("Its summary.", 0, 100),
		"id":          ID("Its id."),
		"kids":        Array("Children.", Ref("kid"), 5),
		"kind":        Enum("Kind.", "a", "b"),
		"at":          Integer("Unix ms.", 0, 1<<53),
		"delta":       Integer("Change.", -(1 << 53), 1<<40),
	}, "id", "description")
	in["$defs"] = map[string]any{"kid": Object("A kid.", map[string]any{"n": Integer("Count.", 0, 9)}, "n")}
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

func TestEmptyDescriptionIsLeftOut(t *testing.T) {
	for name, s := range map[string]S{
		"string": String("", 0, 1), "id": ID(""), "enum": Enum("", "a"), "integer": Integer("", 0, 1),
		"bool": Bool(""), "array": Array("", Bool(""), 1), "object": Object("", map[string]any{}),
	} {
		if _, has := s["description"]; has {
			t.Errorf("%s: empty description rendered", name)
		}
	}
}

// TestIDPatternFixesLength: an id states its pattern only in an input
// schema, and the subset accepts it as bounded.
func TestIDPatternFixesLength(t *testing.T) {
	got, _ := json.Marshal(ID(""))
	if string(got) != `{"pattern":"^[0-9a-f]{32}$","type":"string"}` {
		t.Fatalf("ID: %s", got)
	}
	if p := CheckSubset(JSON(Object("", map[string]any{"id": ID("")}, "id"))); p != nil {
		t.Fatalf("ID outside the subset: %v", p)
	}
}
