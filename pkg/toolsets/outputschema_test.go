package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	gojsonschema "github.com/google/jsonschema-go/jsonschema"
	qri "github.com/qri-io/jsonschema"
)

// resultValidators compile one output schema with each validator a result
// meets: qri-io/jsonschema (the executor's, draft 2019-09) and
// google/jsonschema-go (the Go MCP SDK client's). Each returns a function
// reporting whether an instance is valid.
func resultValidators(t *testing.T, name string, raw json.RawMessage) map[string]func(any) bool {
	t.Helper()
	qri.LoadDraft2019_09()
	q := &qri.Schema{}
	if err := json.Unmarshal(raw, q); err != nil {
		t.Fatalf("%s: qri-io: %v", name, err)
	}
	var g gojsonschema.Schema
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("%s: jsonschema-go: %v", name, err)
	}
	resolved, err := g.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: jsonschema-go resolve: %v", name, err)
	}
	return map[string]func(any) bool{
		"qri-io": func(v any) bool {
			st := q.Validate(context.Background(), v)
			return st.IsValid()
		},
		"jsonschema-go": func(v any) bool { return resolved.Validate(v) == nil },
	}
}

// sampleResult builds the smallest instance of schema node n that fills
// every property and gives every array one item, so each nested required
// field is present; recursion through $ref stops at depth 4.
func sampleResult(n map[string]any, defs map[string]any, depth int) any {
	if ref, ok := n["$ref"].(string); ok {
		return sampleResult(defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any), defs, depth+1)
	}
	if enum, ok := n["enum"].([]any); ok {
		return enum[0]
	}
	typ := n["type"]
	if list, ok := typ.([]any); ok {
		typ = list[0]
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := n["properties"].(map[string]any)
		for name, p := range props {
			out[name] = sampleResult(p.(map[string]any), defs, depth)
		}
		return out
	case "array":
		if depth > 4 {
			return []any{}
		}
		return []any{sampleResult(n["items"].(map[string]any), defs, depth+1)}
	case "string":
		min, _ := n["minLength"].(float64)
		return strings.Repeat("a", int(min))
	case "integer", "number":
		min, _ := n["minimum"].(float64)
		return min
	case "boolean":
		return false
	}
	panic(fmt.Sprintf("sampleResult: unhandled node %v", n))
}

// objectAt is one object inside a sample result, with what its schema
// requires of it.
type objectAt struct {
	obj      map[string]any
	required []string
	closed   bool // additionalProperties: false
	path     string
}

// objectsOf collects every object in v, an instance of schema node n.
func objectsOf(v any, n map[string]any, defs map[string]any, path string, out *[]objectAt) {
	if ref, ok := n["$ref"].(string); ok {
		n = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	}
	switch x := v.(type) {
	case map[string]any:
		var req []string
		for _, r := range asList(n["required"]) {
			req = append(req, r.(string))
		}
		*out = append(*out, objectAt{obj: x, required: req, closed: n["additionalProperties"] == false, path: path})
		props, _ := n["properties"].(map[string]any)
		names := make([]string, 0, len(x))
		for name := range x {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			objectsOf(x[name], props[name].(map[string]any), defs, path+"/"+name, out)
		}
	case []any:
		for i, item := range x {
			objectsOf(item, n["items"].(map[string]any), defs, fmt.Sprintf("%s/%d", path, i), out)
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestOutputSchemasRejectIncompleteResults: for every operation, a
// sample result filling each field validates against its output schema in
// the executor's validator and the Go SDK's, and removing any required
// field, at any depth, or adding an unknown one makes both reject it. So
// leaner result schemas still carry their structure (issue #14).
func TestOutputSchemasRejectIncompleteResults(t *testing.T) {
	for _, op := range fullRegistry(t).Operations() {
		var root map[string]any
		if err := json.Unmarshal(op.OutputSchema, &root); err != nil {
			t.Fatal(err)
		}
		defs, _ := root["$defs"].(map[string]any)
		validators := resultValidators(t, op.Name, op.OutputSchema)
		sample := sampleResult(root, defs, 0)
		for vname, valid := range validators {
			if !valid(sample) {
				t.Errorf("%s: %s rejects the full sample result %v", op.Name, vname, sample)
			}
		}
		var objects []objectAt
		objectsOf(sample, root, defs, "", &objects)
		checked := 0
		for _, o := range objects {
			for _, name := range o.required {
				kept := o.obj[name]
				delete(o.obj, name)
				for vname, valid := range validators {
					if valid(sample) {
						t.Errorf("%s: %s accepts a result missing required %s/%s", op.Name, vname, o.path, name)
					}
				}
				o.obj[name] = kept
				checked++
			}
			if o.closed {
				o.obj["unexpected_field"] = true
				for vname, valid := range validators {
					if valid(sample) {
						t.Errorf("%s: %s accepts an unknown field in %s", op.Name, vname, o.path)
					}
				}
				delete(o.obj, "unexpected_field")
			}
		}
		if len(asList(root["required"])) == 0 || checked == 0 {
			t.Errorf("%s: result schema requires no field", op.Name)
		}
	}
}

// TestTagShapesCarryNoResourceFields: wherever a result holds tags (an
// array named tags of objects, and the tag operations' own results), a
// tag is exactly {id, title}; it carries no mime or other resource field
// (issue #14).
func TestTagShapesCarryNoResourceFields(t *testing.T) {
	tagOps := map[string]bool{"create_tag": true, "update_tag": true}
	found := 0
	for _, op := range fullRegistry(t).Operations() {
		var root map[string]any
		if err := json.Unmarshal(op.OutputSchema, &root); err != nil {
			t.Fatal(err)
		}
		check := func(where string, shape map[string]any) {
			found++
			props, _ := shape["properties"].(map[string]any)
			names := make([]string, 0, len(props))
			for name := range props {
				names = append(names, name)
			}
			sort.Strings(names)
			if strings.Join(names, ",") != "id,title" || shape["additionalProperties"] != false {
				t.Errorf("%s %s: tag shape has fields %v", op.Name, where, names)
			}
		}
		if tagOps[op.Name] {
			check("#", root)
		}
		walkSchema(root, "#", func(path string, node map[string]any) {
			props, _ := node["properties"].(map[string]any)
			tags, _ := props["tags"].(map[string]any)
			if items, ok := tags["items"].(map[string]any); ok && items["type"] == "object" {
				check(path+"/properties/tags/items", items)
			}
		})
	}
	// create_tag, update_tag, list_tags and get_note's tags at least.
	if found < 4 {
		t.Fatalf("found %d tag shapes; the walk lost them", found)
	}
}
