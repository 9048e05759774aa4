package joplinfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// record is one row: field name to string, int64 or float64.
type record map[string]any

func (r record) str(f string) string {
	s, _ := r[f].(string)
	return s
}

func (r record) int(f string) int64 {
	switch v := r[f].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

func (r record) clone() record {
	out := make(record, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// kind describes one Joplin item type: its table, type_ number and columns.
type kind struct {
	name     string // model name, as in ?type=
	table    string // SQL table name, used in error messages
	typ      int    // the type_ property
	fields   []string
	ints     map[string]bool
	floats   map[string]bool
	defaults []string // fields returned when ?fields= is absent
	defVals  map[string]any
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func (k *kind) has(f string) bool {
	for _, x := range k.fields {
		if x == f {
			return true
		}
	}
	return false
}

// newRecord returns a row holding every column at its SQL default.
func (k *kind) newRecord() record {
	r := make(record, len(k.fields))
	for _, f := range k.fields {
		switch {
		case k.ints[f]:
			r[f] = int64(0)
		case k.floats[f]:
			r[f] = float64(0)
		default:
			r[f] = ""
		}
	}
	for f, v := range k.defVals {
		r[f] = v
	}
	return r
}

var noteKind = &kind{
	name: "note", table: "notes", typ: 1,
	fields: []string{"id", "parent_id", "title", "body", "created_time", "updated_time", "is_conflict",
		"latitude", "longitude", "altitude", "author", "source_url", "is_todo", "todo_due", "todo_completed",
		"source", "source_application", "application_data", "order", "user_created_time", "user_updated_time",
		"encryption_cipher_text", "encryption_applied", "markup_language", "is_shared", "share_id",
		"conflict_original_id", "master_key_id", "user_data", "deleted_time"},
	ints: set("created_time", "updated_time", "is_conflict", "is_todo", "todo_due", "todo_completed",
		"user_created_time", "user_updated_time", "encryption_applied", "markup_language", "is_shared", "deleted_time"),
	floats:   set("latitude", "longitude", "altitude", "order"),
	defaults: []string{"id", "parent_id", "title"},
	defVals:  map[string]any{"markup_language": int64(1)},
}

var folderKind = &kind{
	name: "folder", table: "folders", typ: 2,
	fields: []string{"id", "title", "created_time", "updated_time", "user_created_time", "user_updated_time",
		"encryption_cipher_text", "encryption_applied", "parent_id", "is_shared", "share_id", "master_key_id",
		"icon", "user_data", "deleted_time"},
	ints: set("created_time", "updated_time", "user_created_time", "user_updated_time", "encryption_applied",
		"is_shared", "deleted_time"),
	defaults: []string{"id", "parent_id", "title"},
}

var tagKind = &kind{
	name: "tag", table: "tags", typ: 5,
	fields: []string{"id", "title", "created_time", "updated_time", "user_created_time", "user_updated_time",
		"encryption_cipher_text", "encryption_applied", "is_shared", "parent_id", "user_data"},
	ints:     set("created_time", "updated_time", "user_created_time", "user_updated_time", "encryption_applied", "is_shared"),
	defaults: []string{"id", "parent_id", "title"},
}

var resourceKind = &kind{
	name: "resource", table: "resources", typ: 4,
	fields: []string{"id", "title", "mime", "filename", "created_time", "updated_time", "user_created_time",
		"user_updated_time", "file_extension", "encryption_cipher_text", "encryption_applied",
		"encryption_blob_encrypted", "size", "is_shared", "share_id", "master_key_id", "user_data",
		"blob_updated_time", "ocr_text", "ocr_details", "ocr_status", "ocr_error"},
	ints: set("created_time", "updated_time", "user_created_time", "user_updated_time", "encryption_applied",
		"encryption_blob_encrypted", "size", "is_shared", "blob_updated_time", "ocr_status"),
	defaults: []string{"id", "title"},
}

// revisionKind is the revisions table: the apps' note history (the CLI
// server makes none itself; tests plant them with POST /revisions).
var revisionKind = &kind{
	name: "revision", table: "revisions", typ: 13,
	fields: []string{"id", "parent_id", "item_type", "item_id", "item_updated_time", "title_diff", "body_diff",
		"metadata_diff", "encryption_cipher_text", "encryption_applied", "updated_time", "created_time"},
	ints:     set("item_type", "item_updated_time", "encryption_applied", "updated_time", "created_time"),
	defaults: []string{"id", "parent_id"},
}

var noteTagKind = &kind{
	name: "note_tag", table: "note_tags", typ: 6,
	fields: []string{"id", "note_id", "tag_id", "created_time", "updated_time", "user_created_time",
		"user_updated_time", "encryption_cipher_text", "encryption_applied", "is_shared"},
	ints: set("created_time", "updated_time", "user_created_time", "user_updated_time", "encryption_applied", "is_shared"),
}

// table holds the rows of one kind, remembering insertion order the way
// SQLite's rowid does (unordered SELECTs come back in that order).
type table struct {
	kind  *kind
	rows  map[string]record
	rowid map[string]int64
	next  int64
}

func newTable(k *kind) *table {
	return &table{kind: k, rows: map[string]record{}, rowid: map[string]int64{}}
}

func (t *table) get(id string) record { return t.rows[id] }

func (t *table) insert(r record) {
	id := r.str("id")
	t.next++
	t.rows[id] = r
	t.rowid[id] = t.next
}

func (t *table) remove(id string) {
	delete(t.rows, id)
	delete(t.rowid, id)
}

// all returns the rows in rowid order.
func (t *table) all() []record {
	out := make([]record, 0, len(t.rows))
	for _, r := range t.rows {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return t.rowid[out[i].str("id")] < t.rowid[out[j].str("id")] })
	return out
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("joplinfake: random id: %v", err))
	}
	return hex.EncodeToString(b[:])
}

var idPattern = regexp.MustCompile(`^[a-f0-9]{32}$`)

// readonly lists the properties the Data API strips from a write body
// (utils/readonlyProperties.ts); "id" only on PUT.
func readonly(method string) map[string]bool {
	m := set("created_time", "updated_time", "encryption_blob_encrypted", "encryption_applied", "encryption_cipher_text")
	if method != "POST" {
		m["id"] = true
	}
	return m
}

// apply copies the known, writable properties of props into r, converting
// them to the column types the way BaseModel.filter and SQLite would.
func (k *kind) apply(r record, props map[string]any, skip map[string]bool) {
	for _, f := range k.fields {
		v, ok := props[f]
		if !ok || skip[f] {
			continue
		}
		r[f] = k.convert(f, v)
	}
}

func (k *kind) convert(f string, v any) any {
	switch {
	case k.ints[f]:
		n, _ := toInt(v)
		return n
	case k.floats[f]:
		return toFloat(v)
	default:
		return toStr(v)
	}
}

// toInt mimics parseInt on a JSON value; ok is false where JavaScript would
// produce NaN.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) {
			return int64(f), true
		}
	case string:
		s := strings.TrimSpace(x)
		end := 0
		if end < len(s) && (s[end] == '-' || s[end] == '+') {
			end++
		}
		digits := end
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		if end > digits {
			n, err := strconv.ParseInt(s[:end], 10, 64)
			return n, err == nil
		}
	case int64:
		return x, true
	}
	return 0, false
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case string:
		f, _ := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

func toStr(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "1"
		}
		return "0"
	default:
		return fmt.Sprint(x)
	}
}

// truthy is JavaScript truthiness for a decoded JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err == nil && f != 0
	}
	return true
}

// validate is BaseModel.userSideValidation: a client-chosen id must be 32
// lowercase hex characters and user timestamps must be numbers >= 0.
func validate(props map[string]any, checkID bool) *apiError {
	if checkID {
		if id, ok := props["id"]; ok && truthy(id) && !idPattern.MatchString(toStr(id)) {
			return errInternal("Validation error: ID must a 32-characters lowercase hexadecimal string", frameValidation)
		}
	}
	for _, f := range []string{"user_updated_time", "user_created_time"} {
		if v, ok := props[f]; ok {
			if n, ok := toInt(v); !ok || n < 0 {
				return errInternal("Validation error: user_updated_time and user_created_time must be numbers greater than 0", frameValidation)
			}
		}
	}
	return nil
}

// render returns r as a single-item answer: the requested fields plus
// type_, as BaseModel.load followed by addModelMd produces.
func render(k *kind, r record, fields []string) map[string]any {
	out := project(r, fields)
	if k == noteKind {
		for f, digits := range map[string]int{"latitude": 8, "longitude": 8, "altitude": 4} {
			if v, ok := out[f].(float64); ok {
				out[f] = strconv.FormatFloat(v, 'f', digits, 64)
			}
		}
	}
	out["type_"] = k.typ
	return out
}

// project keeps only fields of r; a nil fields keeps every column.
func project(r record, fields []string) map[string]any {
	if fields == nil {
		out := make(map[string]any, len(r))
		for k, v := range r {
			out[k] = v
		}
		return out
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if v, ok := r[f]; ok {
			out[f] = v
		}
	}
	return out
}

// linkPattern finds Joplin item links (":/<32 hex>") in a note body.
var linkPattern = regexp.MustCompile(`:/([a-zA-Z0-9]{32})`)

// linkedIDs returns the distinct item ids linked from body, in order.
func linkedIDs(body string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range linkPattern.FindAllStringSubmatch(body, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// parseBody is JSON.parse of a request body. A non-object value parses to
// nil with isObject false, so callers can mimic property access on it.
func parseBody(body string) (obj map[string]any, isObject bool, aerr *apiError) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false, errJSON(body, err)
	}
	if rest := strings.TrimSpace(body[dec.InputOffset():]); rest != "" {
		pos := len(body) - len(strings.TrimLeft(body[dec.InputOffset():], " \t\r\n"))
		return nil, false, errJSON(body, fmt.Errorf("trailing:%d", pos))
	}
	m, ok := v.(map[string]any)
	if v == nil {
		return nil, false, nil
	}
	if !ok {
		return map[string]any{}, false, nil
	}
	return m, true, nil
}

// parseObject parses a body that Joplin reads properties from; JSON null
// fails as it would in JavaScript.
func parseObject(body, frame string) (map[string]any, *apiError) {
	m, _, aerr := parseBody(body)
	if aerr != nil {
		return nil, aerr
	}
	if m == nil {
		return nil, errTypeError("Cannot read properties of null (reading 'id')", frame)
	}
	return m, nil
}

func isJSON(s string) bool { return json.Valid([]byte(s)) }

// without returns a copy of props minus the keys in drop.
func without(props map[string]any, drop map[string]bool) map[string]any {
	out := make(map[string]any, len(props))
	for k, v := range props {
		if !drop[k] {
			out[k] = v
		}
	}
	return out
}
