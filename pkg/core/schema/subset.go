package schema

import (
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"sort"
	"strings"
)

// allowedKeywords is the draft 2019-09 vocabulary the subset accepts.
var allowedKeywords = map[string]bool{
	"$schema": true, "$id": false, "$ref": true, "$defs": true, "$comment": true,
	"type": true, "enum": true, "const": true,
	"title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
	"properties": true, "required": true, "additionalProperties": true,
	"minProperties": true, "maxProperties": true,
	"items": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"multipleOf": true, "anyOf": true, "oneOf": true,
	"contentEncoding": true, "contentMediaType": true,
}

var allowedTypes = map[string]bool{
	"object": true, "array": true, "string": true, "integer": true,
	"number": true, "boolean": true, "null": true,
}

// CheckSubset reports every way raw, an input schema, strays outside the
// supported subset. A nil result means the schema is accepted.
func CheckSubset(raw json.RawMessage) []string {
	return check(raw, false)
}

// CheckResultSubset is CheckSubset for a result schema, where an integer
// may leave out its maximum: the server produces the value, and a bound
// at JSON's exact-integer range (2^53) would tell a client nothing.
func CheckResultSubset(raw json.RawMessage) []string {
	return check(raw, true)
}

func check(raw json.RawMessage, result bool) []string {
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return []string{"schema is not valid JSON: " + err.Error()}
	}
	c := &checker{result: result}
	obj, ok := root.(map[string]any)
	if !ok {
		return []string{"#: schema must be an object"}
	}
	c.defs, _ = obj["$defs"].(map[string]any)
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not"} {
		if _, has := obj[k]; has {
			c.addf("#", "top-level %s is not allowed", k)
		}
	}
	if obj["type"] != "object" {
		c.addf("#", "top-level schema must have type object")
	}
	c.node("#", obj)
	sort.Strings(c.problems)
	return c.problems
}

type checker struct {
	defs     map[string]any
	problems []string
	result   bool
}

func (c *checker) addf(path, format string, args ...any) {
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, args...))
}

func (c *checker) node(path string, v any) {
	s, ok := v.(map[string]any)
	if !ok {
		c.addf(path, "subschema must be an object")
		return
	}
	for k := range s {
		if !allowedKeywords[k] {
			c.addf(path, "keyword %q is outside the supported subset", k)
		}
	}
	if ref, has := s["$ref"]; has {
		c.ref(path, ref)
		return
	}
	if defs, has := s["$defs"].(map[string]any); has {
		if path != "#" {
			c.addf(path, "$defs is allowed only at the top level")
		}
		for name, d := range defs {
			c.node(path+"/$defs/"+name, d)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, has := s[k]; has {
			list, ok := alts.([]any)
			if !ok || len(list) == 0 {
				c.addf(path, "%s must be a non-empty array", k)
				continue
			}
			for i, alt := range list {
				c.node(fmt.Sprintf("%s/%s/%d", path, k, i), alt)
			}
		}
	}
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	types := c.types(path, s["type"])
	if len(types) == 0 {
		if !hasEnum && !hasConst && s["anyOf"] == nil && s["oneOf"] == nil {
			c.addf(path, "type is required")
		}
		return
	}
	for _, t := range types {
		switch t {
		case "object":
			c.object(path, s)
		case "array":
			if _, has := s["maxItems"]; !has {
				c.addf(path, "array must set maxItems")
			}
			if items, has := s["items"]; has {
				c.node(path+"/items", items)
			} else {
				c.addf(path, "array must set items")
			}
		case "string":
			if _, has := s["maxLength"]; !has && !hasEnum && !hasConst && !lengthBounding(s["pattern"]) {
				c.addf(path, "string must set maxLength")
			}
		case "integer", "number":
			if !hasEnum && !hasConst {
				if !hasAny(s, "minimum", "exclusiveMinimum") || !c.result && !hasAny(s, "maximum", "exclusiveMaximum") {
					c.addf(path, "%s must set a minimum and a maximum", t)
				}
			}
		}
	}
}

// lengthBounding reports whether pattern, anchored at both ends and free
// of unbounded repetition, by itself bounds the length of what it matches
// (as ^[0-9a-f]{32}$ does), so a maxLength beside it would repeat it.
func lengthBounding(pattern any) bool {
	p, ok := pattern.(string)
	if !ok {
		return false
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return false
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return false
	}
	return bounded(re)
}

// bounded reports whether re matches strings of bounded length.
func bounded(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus:
		return false
	case syntax.OpRepeat:
		if re.Max < 0 {
			return false
		}
	}
	for _, sub := range re.Sub {
		if !bounded(sub) {
			return false
		}
	}
	return true
}

func hasAny(s map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

func (c *checker) types(path string, t any) []string {
	switch v := t.(type) {
	case nil:
		return nil
	case string:
		if !allowedTypes[v] {
			c.addf(path, "unknown type %q", v)
		}
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			name, ok := e.(string)
			if !ok || !allowedTypes[name] {
				c.addf(path, "unknown type %v", e)
				continue
			}
			out = append(out, name)
		}
		return out
	default:
		c.addf(path, "type must be a string or an array of strings")
		return nil
	}
}

func (c *checker) object(path string, s map[string]any) {
	if ap, has := s["additionalProperties"]; !has || ap != false {
		c.addf(path, "object must set additionalProperties: false")
	}
	props, _ := s["properties"].(map[string]any)
	if _, has := s["properties"]; has && props == nil {
		c.addf(path, "properties must be an object")
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c.node(path+"/properties/"+name, props[name])
	}
	if req, has := s["required"]; has {
		list, ok := req.([]any)
		if !ok {
			c.addf(path, "required must be an array")
			return
		}
		for _, r := range list {
			name, _ := r.(string)
			if _, ok := props[name]; !ok {
				c.addf(path, "required property %v is not declared", r)
			}
		}
	}
}

func (c *checker) ref(path string, ref any) {
	s, ok := ref.(string)
	if !ok || !strings.HasPrefix(s, "#/$defs/") {
		c.addf(path, "$ref must be a local reference to #/$defs/")
		return
	}
	name := strings.TrimPrefix(s, "#/$defs/")
	if _, ok := c.defs[name]; !ok || strings.Contains(name, "/") {
		c.addf(path, "$ref target %q is not defined in $defs", name)
	}
}
