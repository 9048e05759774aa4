package catalog

import (
	"encoding/json"
	"testing"
)

// walkSchema calls fn on every subschema of raw, with its JSON pointer.
// Property names and $defs names are never taken for keywords.
func walkSchema(v any, path string, fn func(path string, node map[string]any)) {
	switch t := v.(type) {
	case map[string]any:
		fn(path, t)
		for k, x := range t {
			if k == "properties" || k == "$defs" {
				for name, sub := range x.(map[string]any) {
					walkSchema(sub, path+"/"+k+"/"+name, fn)
				}
				continue
			}
			walkSchema(x, path+"/"+k, fn)
		}
	case []any:
		for _, x := range t {
			walkSchema(x, path+"/[]", fn)
		}
	}
}

// TestOutputSchemasCarryStructureNotProse: result schemas state types,
// closed properties, required fields, enums and bounds, and no prose or
// patterns (issue #14 lean catalog); input schemas carry no empty
// description; a tag carries no resource fields.
func TestOutputSchemasCarryStructureNotProse(t *testing.T) {
	for _, op := range fullRegistry(t).Operations() {
		var root any
		if err := json.Unmarshal(op.OutputSchema, &root); err != nil {
			t.Fatal(err)
		}
		walkSchema(root, "#", func(path string, node map[string]any) {
			for _, k := range []string{"description", "title", "examples", "default", "$comment", "pattern"} {
				if _, has := node[k]; has {
					t.Errorf("%s output %s: carries %q", op.Name, path, k)
				}
			}
		})
	}
	reg := fullRegistry(t)
	for _, op := range reg.Operations() {
		var root any
		if err := json.Unmarshal(op.InputSchema, &root); err != nil {
			t.Fatal(err)
		}
		walkSchema(root, "#", func(path string, node map[string]any) {
			if d, has := node["description"]; has && d == "" {
				t.Errorf("%s input %s: empty description", op.Name, path)
			}
		})
	}
	getNote, _ := reg.Lookup("get_note")
	var s struct {
		Properties map[string]struct {
			Items struct {
				Properties map[string]any `json:"properties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(getNote.OutputSchema, &s); err != nil {
		t.Fatal(err)
	}
	if tag := s.Properties["tags"].Items.Properties; len(tag) != 2 || tag["id"] == nil || tag["title"] == nil {
		t.Errorf("get_note tag shape: %v", tag)
	}
	if res := s.Properties["resources"].Items.Properties; res["mime"] == nil {
		t.Errorf("get_note resource shape lost mime: %v", res)
	}
}
