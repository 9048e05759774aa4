package joplinops_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

// world is the notes the leak matrix runs against: Work (readable, named
// by path) with Work/Inbox (writable), and Private with Private/Deep
// outside the scope. A Work note links an outside note; the tag "shared"
// is on notes inside and outside.
type world struct {
	ids     map[string]string // placeholder ($work, $out, …) → id
	secrets []string          // what no answer may carry: outside ids, titles, bodies
}

// outsideContent is the content of the outside resource.
const outsideContent = "outside resource content"

func seedWorld(t testing.TB, h *scopedHarness) world {
	t.Helper()
	id := map[string]string{}
	id["$work"] = h.ownerID(t, "create_notebook", map[string]any{"title": "Work"})
	id["$inbox"] = h.ownerID(t, "create_notebook", map[string]any{"title": "Inbox", "parent_id": id["$work"]})
	id["$private"] = h.ownerID(t, "create_notebook", map[string]any{"title": "Private Journal"})
	id["$deep"] = h.ownerID(t, "create_notebook", map[string]any{"title": "Deep Health", "parent_id": id["$private"]})
	id["$out"] = h.ownerID(t, "create_note", map[string]any{"notebook_id": id["$private"], "title": "Secret diagnosis", "body": "secretbody lemon"})
	id["$trashedOut"] = h.ownerID(t, "create_note", map[string]any{"notebook_id": id["$deep"], "title": "Secret finances", "body": "secretbody lemon trashed"})
	h.owner(t, "trash_note", map[string]any{"id": id["$trashedOut"]}, nil)
	id["$in"] = h.ownerID(t, "create_note", map[string]any{"notebook_id": id["$work"], "title": "Project plan",
		"body": "lemon plan, see [the diagnosis](:/" + id["$out"] + ")"})
	id["$inboxNote"] = h.ownerID(t, "create_note", map[string]any{"notebook_id": id["$inbox"], "title": "Inbox item", "body": "lemon inbox"})
	id["$secretTag"] = h.ownerID(t, "create_tag", map[string]any{"title": "secret-tag"})
	id["$sharedTag"] = h.ownerID(t, "create_tag", map[string]any{"title": "shared"})
	for _, link := range [][2]string{{"$out", "$secretTag"}, {"$out", "$sharedTag"}, {"$in", "$sharedTag"}} {
		h.owner(t, "tag_note", map[string]any{"note_id": id[link[0]], "tag_id": id[link[1]]}, nil)
	}
	id["$outRes"] = h.ownerID(t, "create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString([]byte(outsideContent)),
		"filename": "secret-scan.txt", "title": "Secret scan", "note_id": id["$out"]})
	id["$inRes"] = h.ownerID(t, "create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString([]byte("plan content")),
		"filename": "plan.txt", "note_id": id["$in"]})
	// An edit of an outside note leaves a receipt the scoped caller must
	// not be able to undo or read.
	var applied struct {
		ReceiptID string `json:"receipt_id"`
	}
	changes := []map[string]any{{"note": id["$out"], "op": "append", "text": "more secretbody"}}
	var preview struct {
		PlanDigest string `json:"plan_digest"`
	}
	h.owner(t, "preview_note_changes", map[string]any{"changes": changes}, &preview)
	h.owner(t, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": preview.PlanDigest}, &applied)
	id["$outReceipt"] = applied.ReceiptID
	// One revision each of an outside and an inside note, as the apps
	// sync them.
	for _, k := range [][2]string{{"$outRev", "$out"}, {"$inRev", "$in"}} {
		id[k[0]] = joplin.NewID()
		rev := map[string]any{"id": id[k[0]], "item_type": 1, "item_id": id[k[1]], "item_updated_time": 1_700_000_000_000,
			"title_diff": "", "body_diff": "", "metadata_diff": `{"new":{},"deleted":[]}`, "encryption_applied": 0}
		if err := h.c.Write(own, "POST", "/revisions", nil, rev, nil); err != nil {
			t.Fatalf("plant revision: %v", err)
		}
	}
	w := world{ids: id}
	// $out's id is not listed: the Work note's body links it, and a
	// visible body is shown as written. What lies behind the link (its
	// title, body, tags) is checked.
	for _, k := range []string{"$private", "$deep", "$trashedOut", "$secretTag", "$outRes", "$outReceipt", "$outRev"} {
		w.secrets = append(w.secrets, id[k])
	}
	w.secrets = append(w.secrets, "Secret diagnosis", "Secret finances", "Secret scan", "secret-scan", "Private Journal",
		"Deep Health", "secretbody", "secret-tag", outsideContent, base64.StdEncoding.EncodeToString([]byte(outsideContent)))
	return w
}

// scopeOfWorld reads Work (by path) and writes Work/Inbox.
var scopeOfWorld = notebookscope.New(notebookscope.Only("Work"), notebookscope.Only("Work/Inbox"))

// variant is one call of the matrix; $names stand for the world's ids.
type variant map[string]any

// leakMatrix lists, for every Joplin operation, calls about objects inside,
// outside, trashed outside, and linked from inside to outside.
var leakMatrix = map[string][]variant{
	"joplin_status": {{}},
	"list_notes": {{}, {"include_trashed": true, "include_body": true}, {"notebook_id": "$private"}, {"notebook_id": "$work"},
		{"tag_id": "$sharedTag"}, {"tag_id": "$secretTag"}, {"resource_id": "$outRes"}, {"resource_id": "$inRes"}},
	"get_note": {{"id": "$in", "include": []string{"tags", "resources", "links", "backlinks"}, "include_body": true},
		{"id": "$out", "include_body": true}, {"id": "$trashedOut"}},
	"create_note":          {{"notebook_id": "$inbox", "title": "New"}, {"notebook_id": "$private", "title": "New"}, {"notebook_id": "$work", "title": "New"}},
	"update_note":          {{"id": "$in", "title": "Changed"}, {"id": "$out", "title": "Changed"}, {"id": "$trashedOut", "body": "x"}, {"id": "$inboxNote", "notebook_id": "$private"}, {"id": "$inboxNote", "notebook_id": "$work"}},
	"trash_note":           {{"id": "$out"}, {"id": "$trashedOut"}, {"id": "$in"}},
	"restore_note":         {{"id": "$trashedOut"}, {"id": "$trashedOut", "notebook_id": "$inbox"}, {"id": "$out"}},
	"preview_note_changes": {{"changes": []variant{{"note": "$out", "op": "append", "text": "x"}}}, {"changes": []variant{{"note": "$in", "op": "append", "text": "x"}}}},
	"apply_note_changes":   {{"changes": []variant{{"note": "$out", "op": "append", "text": "x"}}, "plan_digest": strings.Repeat("a", 64)}},
	"undo_note_changes":    {{"receipt_id": "$outReceipt"}},
	"edit_note": {{"id": "$out", "updated_time": 0, "changes": []variant{{"op": "append", "text": "x"}}},
		{"id": "$inboxNote", "updated_time": 0, "changes": []variant{{"op": "tag", "target": "secret-tag"}}},
		{"id": "$inboxNote", "updated_time": 0, "changes": []variant{{"op": "tag", "target": "secret-tag", "create": true}}}},
	"list_notebooks":   {{}},
	"get_notebook":     {{"id": "$private"}, {"id": "$deep"}, {"id": "$work"}},
	"create_notebook":  {{"title": "Private Journal"}, {"title": "Sub", "parent_id": "$private"}, {"title": "Sub", "parent_id": "$inbox"}},
	"update_notebook":  {{"id": "$private", "title": "x"}, {"id": "$inbox", "parent_id": "$private"}, {"id": "$work", "title": "W"}},
	"trash_notebook":   {{"id": "$private"}, {"id": "$deep"}, {"id": "$work"}},
	"restore_notebook": {{"id": "$deep"}, {"id": "$private"}},
	"list_tags":        {{}},
	"create_tag":       {{"title": "secret-tag"}, {"title": "fresh"}, {"title": "shared"}},
	"update_tag":       {{"id": "$secretTag", "title": "renamed"}, {"id": "$sharedTag", "title": "renamed"}},
	"delete_tag":       {{"id": "$secretTag"}, {"id": "$sharedTag"}},
	"tag_note": {{"note_id": "$out", "tag_id": "$sharedTag"}, {"note_id": "$inboxNote", "tag_id": "$sharedTag"}, {"note_id": "$inboxNote", "tag_id": "$secretTag"},
		{"note_id": "$inboxNote", "tag": "secret-tag"}, {"note_id": "$inboxNote", "tag": "secret-tag", "create": true}},
	"untag_note":           {{"note_id": "$out", "tag_id": "$sharedTag"}, {"note_id": "$in", "tag_id": "$sharedTag"}},
	"list_resources":       {{}},
	"get_resource":         {{"id": "$outRes", "include_notes": true}, {"id": "$inRes", "include_notes": true}},
	"get_resource_content": {{"id": "$outRes"}, {"id": "$inRes"}},
	"create_resource": {{"data_base64": base64.StdEncoding.EncodeToString([]byte(outsideContent)), "filename": "copy.txt"},
		{"data_base64": "aGVsbG8=", "note_id": "$out"}},
	"update_resource": {{"id": "$outRes", "title": "x"}, {"id": "$inRes", "title": "y"}},
	"delete_resource": {{"id": "$outRes"}, {"id": "$inRes"}},
	"search": {{"query": "lemon"}, {"query": "lemon", "include_trashed": true}, {"query": "diagnosis"}, {"query": "*", "type": "notebook"},
		{"query": "*", "type": "tag"}, {"query": "tag:shared"}, {"query": "notebook:Private*"}},
	"list_trash":          {{}},
	"list_note_revisions": {{"note_id": "$out"}, {"note_id": "$in"}},
	"get_note_revision":   {{"note_id": "$out", "revision_id": "$outRev"}, {"note_id": "$in", "revision_id": "$outRev"}, {"note_id": "$in", "revision_id": "$inRev"}},
	"fetch":               {{"id": "$out"}, {"id": "$trashedOut"}, {"id": "$in"}},
}

// expand replaces the world's placeholders in v.
func (w world) expand(v any) any {
	switch x := v.(type) {
	case string:
		if id, ok := w.ids[x]; ok {
			return id
		}
		return x
	case variant:
		out := map[string]any{}
		for k, e := range x {
			out[k] = w.expand(e)
		}
		return out
	case []variant:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = w.expand(e)
		}
		return out
	}
	return v
}

// leaks returns the secrets in answer that the call did not name itself.
func (w world) leaks(args, answer []byte) []string {
	var out []string
	low := strings.ToLower(string(answer))
	for _, s := range w.secrets {
		if strings.Contains(low, strings.ToLower(s)) && !strings.Contains(strings.ToLower(string(args)), strings.ToLower(s)) {
			out = append(out, s)
		}
	}
	return out
}

// TestLeakMatrixCoversEveryJoplinOperation: a Joplin operation added
// later fails here until the matrix says how to call it.
func TestLeakMatrixCoversEveryJoplinOperation(t *testing.T) {
	for _, op := range joplinops.Operations(nil, joplinops.DefaultLimits) {
		if _, ok := leakMatrix[op.Name]; !ok {
			t.Errorf("operation %s is not in the leak matrix", op.Name)
		}
	}
}

// TestLeakMatrix runs every Joplin operation, on every surface, as a caller
// limited to Work: no answer, error or error detail may carry an id,
// title, body, snippet or content of an object outside it. Reads share one
// world; every write runs in a fresh one.
func TestLeakMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds many worlds")
	}
	shared := newScopedHarness(t)
	checkLeakMatrix(t, shared, seedWorld(t, shared), newScopedHarness)
}

// checkLeakMatrix runs the leak matrix: the reads on shared (holding
// sharedWorld, its index not yet built), each write on a fresh harness
// from newHarness; nil runs the reads only.
func checkLeakMatrix(t *testing.T, shared *scopedHarness, sharedWorld world, newHarness func(testing.TB) *scopedHarness) {
	shared.buildIndex(t)
	sharedCallers := shared.callers(t, scopeOfWorld)
	ops := joplinops.Operations(nil, joplinops.DefaultLimits)
	for _, op := range ops {
		if op.Effect != "read" && newHarness == nil {
			continue
		}
		for i, v := range leakMatrix[op.Name] {
			for k, who := range sharedCallers {
				if !op.ExposedOn(who.t) {
					continue
				}
				w := sharedWorld
				if op.Effect != "read" {
					h := newHarness(t)
					w, who = seedWorld(t, h), h.callers(t, scopeOfWorld)[k]
				}
				args, _ := json.Marshal(w.expand(v))
				res, derr := who.call(op.Name, mustMap(args))
				answer := []byte(res)
				if derr != nil {
					answer, _ = json.Marshal(derr)
				}
				if (op.Name == "create_tag" || op.Name == "tag_note" && v["create"] == true) && derr == nil {
					// A create reusing a tag of other notebooks answers
					// its id as a fresh create answers a new one.
					answer = []byte(strings.ReplaceAll(string(answer), w.ids["$secretTag"], "<reused>"))
				}
				if l := w.leaks(args, answer); len(l) > 0 {
					t.Errorf("%s #%d over %s leaks %q: %s", op.Name, i, who.name, l, answer)
				}
			}
		}
	}
}

func mustMap(b []byte) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// TestOutsideAnswersLikeMissing: every call naming an outside object
// answers exactly as the same call naming an object that does not exist
// (same code, message and details once the id is set aside).
func TestOutsideAnswersLikeMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds many worlds")
	}
	for _, op := range joplinops.Operations(nil, joplinops.DefaultLimits) {
		for i, v := range leakMatrix[op.Name] {
			names := outsideNames(v)
			if len(names) == 0 {
				continue
			}
			run := func(missing bool) (string, bool) {
				h := newScopedHarness(t)
				w, who := seedWorld(t, h), h.callers(t, scopeOfWorld)[0]
				if missing {
					for _, n := range names {
						w.ids[n] = joplin.NewID()
					}
				}
				args, _ := json.Marshal(w.expand(v))
				_, derr := who.call(op.Name, mustMap(args))
				if derr == nil {
					return "", true
				}
				b, _ := json.Marshal(derr)
				s := string(b)
				for _, n := range names {
					s = strings.ReplaceAll(s, w.ids[n], "<id>")
				}
				return s, false
			}
			outside, okOutside := run(false)
			missing, okMissing := run(true)
			if okOutside != okMissing || outside != missing {
				t.Errorf("%s #%d: outside answers %q (ok %v), missing answers %q (ok %v)", op.Name, i, outside, okOutside, missing, okMissing)
			}
		}
	}
}

// outsideNames lists the outside placeholders v names.
func outsideNames(v variant) []string {
	outside := []string{"$private", "$deep", "$out", "$trashedOut", "$secretTag", "$outRes", "$outReceipt", "$outRev"}
	var out []string
	b, _ := json.Marshal(v)
	for _, n := range outside {
		if strings.Contains(string(b), `"`+n+`"`) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
