package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Vocabulary names the enums, patterns and bounds that struct tags refer
// to by name (enum=@NAME, pattern=NAME, max=@NAME, default=@NAME), for
// values that live in Go code, depend on configuration or do not fit a
// tag.
type Vocabulary struct {
	Enums    map[string][]string
	Patterns map[string]string
	Bounds   map[string]int64
	// Texts holds descriptions that depend on configuration (desc=@NAME).
	Texts map[string]string
	// Strings are types that encode as a JSON string by themselves (a
	// custom UnmarshalJSON).
	Strings []reflect.Type
	// Defs maps a type to the $defs entry that stands for it: every use
	// becomes a $ref, and the type's schema is rendered once under $defs
	// (a recursive type needs this).
	Defs map[reflect.Type]string
}

// For derives the schema of T: google/jsonschema-go reflects the Go type
// (properties from json names, required from the absence of omitempty,
// descriptions from `jsonschema` tags), then the `schema` tag of each
// field adds what Go types cannot say. Its comma-separated items:
//
//	min=N, max=N    string length, integer range, or array item count
//	                (N may be @NAME, a bound of the vocabulary)
//	itemmin=N, itemmax=N   string length of an array's items
//	itemdesc=TEXT   the description of an array's items (no commas)
//	enum=a|b|c, enum=@NAME  allowed strings (of the items, for an array)
//	id              a Joplin object id (of the items, for an array)
//	pattern=NAME    a named pattern (of the items, for an array)
//	default=V       the default annotation (JSON, a bare string, or @NAME)
//	desc=@NAME      a description from the vocabulary's Texts
//	base64          contentEncoding base64
//	nullable        accept null; pointers and slices do not otherwise
//	optional        not required although not omitempty
//
// The result is checked against the subset by registry.New, not here.
func For[T any](v Vocabulary) (S, error) {
	return ForType(reflect.TypeFor[T](), v)
}

// ForType is For for a reflect.Type.
func ForType(t reflect.Type, v Vocabulary) (S, error) {
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{}}
	for _, st := range v.Strings {
		opts.TypeSchemas[st] = &jsonschema.Schema{Type: "string"}
	}
	for dt, name := range v.Defs {
		opts.TypeSchemas[dt] = &jsonschema.Schema{Ref: "#/$defs/" + name}
	}
	root, err := derive(t, opts, v)
	if err != nil {
		return nil, err
	}
	defs := map[string]any{}
	for pending := refsIn(root); len(pending) > 0; {
		name := pending[0]
		pending = pending[1:]
		if _, done := defs[name]; done {
			continue
		}
		dt, ok := defType(v, name)
		if !ok {
			return nil, fmt.Errorf("schema: $ref to %q, which the vocabulary does not define", name)
		}
		// A struct type built from the type's exported fields is not the
		// type, so its fields still refer to it while it is rendered in full.
		d, err := derive(reflect.StructOf(exported(dt)), opts, v)
		if err != nil {
			return nil, fmt.Errorf("$defs %s: %w", name, err)
		}
		defs[name] = d
		pending = append(pending, refsIn(d)...)
	}
	if len(defs) > 0 {
		root["$defs"] = defs
	}
	return root, nil
}

func defType(v Vocabulary, name string) (reflect.Type, bool) {
	for t, n := range v.Defs {
		if n == name {
			return t, true
		}
	}
	return nil, false
}

// refsIn lists the $defs names s refers to.
func refsIn(s S) []string {
	var out []string
	var visit func(any)
	visit = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			if ref, ok := t["$ref"].(string); ok {
				out = append(out, strings.TrimPrefix(ref, "#/$defs/"))
			}
			for _, sub := range t {
				visit(sub)
			}
		case []any:
			for _, sub := range t {
				visit(sub)
			}
		}
	}
	visit(s)
	return out
}

// exported lists struct type t's exported fields, the ones JSON sees.
func exported(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			out = append(out, f)
		}
	}
	return out
}

func derive(t reflect.Type, opts *jsonschema.ForOptions, v Vocabulary) (S, error) {
	s, err := jsonschema.ForType(t, opts)
	if err != nil {
		return nil, fmt.Errorf("schema: derive %v: %w", t, err)
	}
	node := toMap(s)
	if err := (&tagger{v: v}).walk(node, t, tag{}); err != nil {
		return nil, fmt.Errorf("schema: %v: %w", t, err)
	}
	return node, nil
}

// toMap converts what the reflector sets (jsonschema.ForType: types,
// properties, required, closed objects, items, sized integers' ranges,
// arrays' lengths, descriptions, and the references of TypeSchemas) into
// a node; it is jsonschema.Schema's JSON encoding without the encoding,
// which dominated the catalog's build time.
func toMap(s *jsonschema.Schema) S {
	m := S{}
	switch {
	case s.Ref != "":
		m["$ref"] = s.Ref
	case s.Type != "":
		m["type"] = s.Type
	case len(s.Types) > 0:
		types := make([]any, len(s.Types))
		for i, t := range s.Types {
			types[i] = t
		}
		m["type"] = types
	}
	if s.Description != "" {
		m["description"] = s.Description
	}
	if s.Properties != nil {
		props := make(map[string]any, len(s.Properties))
		for name, p := range s.Properties {
			props[name] = toMap(p)
		}
		m["properties"] = props
	}
	if len(s.Required) > 0 {
		req := make([]any, len(s.Required))
		for i, r := range s.Required {
			req[i] = r
		}
		m["required"] = req
	}
	if ap := s.AdditionalProperties; ap != nil {
		if ap.Not != nil { // the reflector's closed object: false
			m["additionalProperties"] = false
		} else {
			m["additionalProperties"] = toMap(ap)
		}
	}
	if s.Items != nil {
		m["items"] = toMap(s.Items)
	}
	if s.Minimum != nil {
		m["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		m["maximum"] = *s.Maximum
	}
	if s.MinItems != nil {
		m["minItems"] = *s.MinItems
	}
	if s.MaxItems != nil {
		m["maxItems"] = *s.MaxItems
	}
	return m
}

// tag is a field's parsed `schema` tag.
type tag map[string]string

// tagItems are the items a `schema` tag may hold (For).
var tagItems = map[string]bool{
	"min": true, "max": true, "itemmin": true, "itemmax": true, "itemdesc": true, "enum": true, "id": true,
	"pattern": true, "default": true, "desc": true, "base64": true, "nullable": true, "optional": true,
}

func parseTag(s string) (tag, error) {
	t := tag{}
	if s == "" {
		return t, nil
	}
	for _, item := range strings.Split(s, ",") {
		k, val, _ := strings.Cut(item, "=")
		if !tagItems[k] {
			return nil, fmt.Errorf("unknown schema tag item %q", k)
		}
		t[k] = val
	}
	return t, nil
}

type tagger struct{ v Vocabulary }

// walk applies tg to node, the derived schema of t, and recurses.
func (tr *tagger) walk(node S, t reflect.Type, tg tag) error {
	if _, isRef := node["$ref"]; isRef {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	setNullable(node, tg.has("nullable"))
	if slices.Contains(tr.v.Strings, t) {
		return tr.scalar(node, tg)
	}
	switch t.Kind() {
	case reflect.Struct:
		return tr.object(node, t)
	case reflect.Slice, reflect.Array:
		return tr.array(node, t, tg)
	case reflect.Map:
		if sub, ok := node["additionalProperties"].(map[string]any); ok {
			return tr.walk(sub, t.Elem(), tag{})
		}
		return nil
	}
	return tr.scalar(node, tg)
}

func (tg tag) has(k string) bool { _, ok := tg[k]; return ok }

func (tr *tagger) object(node S, t reflect.Type) error {
	props, _ := node["properties"].(map[string]any)
	required, _ := node["required"].([]any)
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sub, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		tg, err := parseTag(f.Tag.Get("schema"))
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if tg.has("optional") {
			required = slices.DeleteFunc(required, func(r any) bool { return r == name })
		}
		if err := tr.walk(sub, f.Type, tg); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	if len(required) == 0 {
		delete(node, "required")
	} else {
		node["required"] = required
	}
	if props == nil {
		node["properties"] = map[string]any{}
	}
	return nil
}

func (tr *tagger) array(node S, t reflect.Type, tg tag) error {
	if err := tr.bound(node, tg, "min", "minItems"); err != nil {
		return err
	}
	if err := tr.bound(node, tg, "max", "maxItems"); err != nil {
		return err
	}
	items, ok := node["items"].(map[string]any)
	if !ok {
		return nil
	}
	if d, ok := tg["itemdesc"]; ok {
		items["description"] = d
	}
	itemTag := tag{}
	for k, val := range tg {
		switch k {
		case "itemmin":
			itemTag["min"] = val
		case "itemmax":
			itemTag["max"] = val
		case "enum", "id", "pattern":
			itemTag[k] = val
		}
	}
	return tr.walk(items, t.Elem(), itemTag)
}

func (tr *tagger) scalar(node S, tg tag) error {
	lo, hi := "minimum", "maximum"
	if node["type"] == "string" || slices.Contains(asList(node["type"]), "string") {
		lo, hi = "minLength", "maxLength"
	}
	if err := tr.bound(node, tg, "min", lo); err != nil {
		return err
	}
	if err := tr.bound(node, tg, "max", hi); err != nil {
		return err
	}
	if e, ok := tg["enum"]; ok {
		values, err := tr.enum(e)
		if err != nil {
			return err
		}
		node["enum"] = values
	}
	if tg.has("id") {
		node["pattern"] = IDPattern
	}
	if tg.has("base64") {
		node["contentEncoding"] = "base64"
	}
	if d, ok := tg["desc"]; ok {
		text, found := tr.v.Texts[strings.TrimPrefix(d, "@")]
		if !found {
			return fmt.Errorf("unknown text %q", d)
		}
		node["description"] = text
	}
	if p, ok := tg["pattern"]; ok {
		pat, found := tr.v.Patterns[p]
		if !found {
			return fmt.Errorf("unknown pattern %q", p)
		}
		node["pattern"] = pat
	}
	if d, ok := tg["default"]; ok {
		var val any
		if name, ok := strings.CutPrefix(d, "@"); ok {
			n, found := tr.v.Bounds[name]
			if !found {
				return fmt.Errorf("unknown bound %q", name)
			}
			val = n
		} else if err := json.Unmarshal([]byte(d), &val); err != nil {
			val = d
		}
		node["default"] = val
	}
	return nil
}

func (tr *tagger) enum(e string) ([]any, error) {
	var values []string
	if name, ok := strings.CutPrefix(e, "@"); ok {
		v, found := tr.v.Enums[name]
		if !found {
			return nil, fmt.Errorf("unknown enum %q", name)
		}
		values = v
	} else {
		values = strings.Split(e, "|")
	}
	out := make([]any, len(values))
	for i, s := range values {
		out[i] = s
	}
	return out, nil
}

// bound copies tag item k, an integer or a named bound, to keyword kw.
func (tr *tagger) bound(node S, tg tag, k, kw string) error {
	s, ok := tg[k]
	if !ok {
		return nil
	}
	if name, ok := strings.CutPrefix(s, "@"); ok {
		n, found := tr.v.Bounds[name]
		if !found {
			return fmt.Errorf("unknown bound %q", name)
		}
		node[kw] = n
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%s=%q: not an integer", k, s)
	}
	node[kw] = n
	return nil
}

// setNullable leaves null among a node's types only when asked: the
// reflector makes every pointer and slice nullable, but a pointer here
// means an optional argument and a slice is always encoded as an array.
func setNullable(node S, nullable bool) {
	types := slices.DeleteFunc(asList(node["type"]), func(s string) bool { return s == "null" })
	switch {
	case len(types) == 0:
	case nullable:
		node["type"] = append(types, "null")
	case len(types) == 1:
		node["type"] = types[0]
	default:
		node["type"] = types
	}
}

func asList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}
