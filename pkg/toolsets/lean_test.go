package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	qri "github.com/qri-io/jsonschema"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
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

// TestIDLengthStillRejected: ids carry only their pattern (issue #14: the
// anchored pattern fixes the length), and the executor still refuses any
// id that is not 32 lowercase hex characters with INVALID_ARGUMENT at the
// id's path, as it did with the length bounds beside the pattern.
func TestIDLengthStillRejected(t *testing.T) {
	ex, err := executor.New(fullRegistry(t), executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	hex := strings.Repeat("0123456789abcdef", 4)
	for _, id := range []string{"", hex[:31], hex[:33], hex[:64], strings.ToUpper(hex[:32]), hex[:31] + "\n", hex[:32] + "\n"} {
		for _, c := range []struct{ op, args string }{
			{"get_note", `{"id":%q}`},
			{"tag_note", `{"note_id":%q,"tag_id":"` + hex[:32] + `"}`},
		} {
			_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, c.op, json.RawMessage(fmt.Sprintf(c.args, id)))
			if derr == nil || derr.Code != domainerr.InvalidArgument {
				t.Fatalf("%s with id %q: %v, want INVALID_ARGUMENT", c.op, id, derr)
			}
			problems, _ := json.Marshal(derr.Details["problems"])
			if !strings.Contains(string(problems), `"reason":"string does not match the required pattern"`) {
				t.Errorf("%s with id %q: problems %s", c.op, id, problems)
			}
		}
	}
	// A well-formed id passes validation and reaches the handler, which
	// finds no Joplin at 127.0.0.1:1.
	if _, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "get_note", json.RawMessage(`{"id":"`+hex[:32]+`"}`)); derr == nil || derr.Code == domainerr.InvalidArgument {
		t.Fatalf("well-formed id: %v", derr)
	}
}

// TestInputDefaultsAreValid: a default stated in an input schema (instead
// of a "Default x." description) is itself a valid value of its field, in
// the executor's validator.
func TestInputDefaultsAreValid(t *testing.T) {
	qri.LoadDraft2019_09()
	found := 0
	for _, op := range fullRegistry(t).Operations() {
		var root any
		if err := json.Unmarshal(op.InputSchema, &root); err != nil {
			t.Fatal(err)
		}
		walkSchema(root, "#", func(path string, node map[string]any) {
			def, has := node["default"]
			if !has {
				return
			}
			found++
			raw, _ := json.Marshal(node)
			s := &qri.Schema{}
			if err := json.Unmarshal(raw, s); err != nil {
				t.Fatal(err)
			}
			if st := s.Validate(context.Background(), def); !st.IsValid() {
				t.Errorf("%s %s: default %v is not a valid value: %v", op.Name, path, def, *st.Errs)
			}
		})
	}
	if found < 10 {
		t.Errorf("found %d defaults; the walk lost them", found)
	}
}
