package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckSubsetAcceptsBoundedSchemas(t *testing.T) {
	raw := `{"type":"object","additionalProperties":false,"required":["id"],"properties":{
		"id":{"type":"string","pattern":"^[0-9a-f]{32}$","description":"note id"},
		"title":{"type":"string","minLength":1,"maxLength":200},
		"limit":{"type":"integer","minimum":1,"maximum":100},
		"tags":{"type":"array","maxItems":50,"items":{"type":"string","minLength":1,"maxLength":100}},
		"kind":{"type":"string","enum":["a","b"]},
		"done":{"type":"boolean"},
		"when":{"type":["integer","null"],"minimum":0,"maximum":4503599627370496}}}`
	if p := CheckSubset(json.RawMessage(raw)); p != nil {
		t.Fatalf("unexpected problems: %v", p)
	}
}

func TestCheckSubsetRejects(t *testing.T) {
	cases := map[string]string{
		"open object":        `{"type":"object","properties":{}}`,
		"top-level anyOf":    `{"type":"object","additionalProperties":false,"anyOf":[{"type":"object","additionalProperties":false}]}`,
		"unbounded string":   `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`,
		"unbounded integer":  `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer","minimum":0}}}`,
		"unbounded array":    `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"array","items":{"type":"boolean"}}}}`,
		"remote ref":         `{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"http://example.com/s.json"}}}`,
		"missing def":        `{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/x"}}}`,
		"draft-07 keyword":   `{"type":"object","additionalProperties":false,"definitions":{}}`,
		"not an object root": `{"type":"string","maxLength":3}`,
		"undeclared require": `{"type":"object","additionalProperties":false,"properties":{},"required":["x"]}`,
		"nested open object": `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"object"}}}`,
		"if/then":            `{"type":"object","additionalProperties":false,"if":{}}`,
		"missing type":       `{"type":"object","additionalProperties":false,"properties":{"a":{"description":"x"}}}`,
	}
	for name, raw := range cases {
		if p := CheckSubset(json.RawMessage(raw)); len(p) == 0 {
			t.Errorf("%s: accepted %s", name, raw)
		}
	}
}

func TestCheckSubsetLocalDefs(t *testing.T) {
	raw := `{"type":"object","additionalProperties":false,"$defs":{"n":{"type":"string","maxLength":4}},"properties":{"a":{"$ref":"#/$defs/n"}}}`
	if p := CheckSubset(json.RawMessage(raw)); p != nil {
		t.Fatalf("local $defs ref rejected: %v", p)
	}
	if p := CheckSubset(json.RawMessage(`not json`)); len(p) != 1 || !strings.Contains(p[0], "not valid JSON") {
		t.Fatalf("bad JSON: %v", p)
	}
}

// TestCheckSubsetPatternBoundsLength: an anchored pattern without
// unbounded repetition bounds a string by itself; any other pattern does
// not replace maxLength.
func TestCheckSubsetPatternBoundsLength(t *testing.T) {
	for pattern, ok := range map[string]bool{
		IDPattern:            true,
		"^([0-9a-f]{32})?$":  true,
		"^(ab|cde){1,4}$":    true,
		"^[0-9a-f]{32}":      false, // not anchored at the end
		"[0-9a-f]{32}$":      false,
		"^[a-z]+$":           false,
		"^a{2,}$":            false,
		"^a$|^b*$":           false,
		"^(?:x|y*)$":         false,
		"^[^/\\x00-\\x1f]+$": false,
		"(":                  false,
	} {
		raw, _ := json.Marshal(S{"type": "object", "additionalProperties": false,
			"properties": S{"a": S{"type": "string", "pattern": pattern}}})
		if p := CheckSubset(raw); (p == nil) != ok {
			t.Errorf("pattern %q: problems %v, want accepted=%v", pattern, p, ok)
		}
	}
}

// TestCheckResultSubsetIntegerMaximum: a result integer may leave out its
// maximum; an input integer may not, and neither may leave out a minimum.
func TestCheckResultSubsetIntegerMaximum(t *testing.T) {
	noMax := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer","minimum":0}}}`)
	noMin := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer","maximum":9}}}`)
	if p := CheckResultSubset(noMax); p != nil {
		t.Errorf("result integer without maximum rejected: %v", p)
	}
	if p := CheckSubset(noMax); p == nil {
		t.Error("input integer without maximum accepted")
	}
	if p := CheckResultSubset(noMin); p == nil {
		t.Error("result integer without minimum accepted")
	}
	for name, raw := range map[string]string{
		"unbounded string": `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`,
		"open object":      `{"type":"object","properties":{}}`,
	} {
		if p := CheckResultSubset(json.RawMessage(raw)); p == nil {
			t.Errorf("result %s accepted", name)
		}
	}
}
