package scopeview

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// call is one request of a limited caller, with its scope resolved.
type call struct {
	v     *View
	ctx   context.Context
	sc    notebookscope.Scope
	s     sets
	tree  *notebookscope.Tree
	r     *joplin.Request
	parts []string
	// notebookOf remembers the notebooks of notes looked up in this
	// request (the notes of a list of revisions).
	notebookOf map[string]string
}

func (c *call) is(method string) bool { return c.r.Method == method }

// admit decides whether the request may be sent. A path the rules do not
// know is refused as missing: new endpoints stay closed until a rule says
// what they reveal.
func (c *call) admit() error {
	p, n, get := c.parts, len(c.parts), c.is(http.MethodGet)
	switch {
	case p[0] == "notes" && n <= 2 && get:
		c.needFields("parent_id")
		return nil
	case p[0] == "notes" && n == 1 && c.is(http.MethodPost):
		parent, _ := c.bodyString("parent_id")
		return c.mayCreateIn(parent)
	case p[0] == "notes" && n == 2:
		return c.mayChange(p[1], c.noteParent)
	case p[0] == "notes" && n == 3 && get && (p[2] == "tags" || p[2] == "resources"):
		return c.noteReadable(p[1])
	case p[0] == "folders" && n == 1 && get:
		c.needFields("id", "parent_id")
		return nil
	case p[0] == "folders" && n == 1 && c.is(http.MethodPost):
		parent, _ := c.bodyString("parent_id")
		return c.mayCreateIn(parent)
	case p[0] == "folders" && n == 2 && get:
		return c.folderReadable(p[1])
	case p[0] == "folders" && n == 2:
		return c.mayChange(p[1], func(id string) (string, error) { return id, nil })
	case p[0] == "folders" && n == 3 && get && p[2] == "notes":
		return c.folderReadable(p[1])
	case p[0] == "tags" || p[0] == "resources":
		return c.admitShared()
	case p[0] == "revisions" && n <= 2 && get:
		c.needFields("item_type", "item_id")
		return nil
	case p[0] == "search" && n == 1 && get:
		switch c.r.Query.Get("type") {
		case "", "note":
			c.needFields("parent_id")
		case "folder":
			c.needFields("id", "parent_id")
		case "tag":
			c.needFields("id")
		default:
			return joplin.ErrHidden
		}
		return nil
	}
	return joplin.ErrHidden
}

// admitShared decides the requests about tags and resources: objects every
// notebook shares.
func (c *call) admitShared() error {
	p, n, get := c.parts, len(c.parts), c.is(http.MethodGet)
	tag := p[0] == "tags"
	switch {
	case n == 1 && get:
		if tag {
			c.needFields("id")
		}
		return nil
	case n == 1 && c.is(http.MethodPost):
		if c.s.write.Empty() {
			return notWritable()
		}
		return nil
	case tag && n == 3 && p[2] == "notes" && get:
		c.needFields("parent_id")
		return c.tagReadable(p[1])
	case tag && n == 3 && p[2] == "notes" && c.is(http.MethodPost):
		if err := c.tagReadable(p[1]); err != nil {
			return err
		}
		id, _ := c.bodyString("id")
		return c.mayChange(id, c.noteParent)
	case tag && n == 4 && p[2] == "notes" && c.is(http.MethodDelete):
		if err := c.tagReadable(p[1]); err != nil {
			return err
		}
		return c.mayChange(p[3], c.noteParent)
	case tag && n == 2 && get:
		return c.tagReadable(p[1])
	case tag && n == 2:
		if err := c.tagReadable(p[1]); err != nil {
			return err
		}
		return c.shared("tag")
	case !tag && get && (n == 2 || n == 3 && (p[2] == "file" || p[2] == "notes")):
		return c.resourceReadable(p[1])
	case !tag && n == 2 && c.is(http.MethodPut):
		return c.resourceWritable(p[1])
	case !tag && n == 2 && c.is(http.MethodDelete):
		if err := c.resourceReadable(p[1]); err != nil {
			return err
		}
		return c.shared("resource")
	}
	return joplin.ErrHidden
}

// shared refuses a change to a shared object unless the caller writes
// every notebook.
func (c *call) shared(kind string) error {
	if c.s.write.IsAll() {
		return nil
	}
	return sharedNotWritable(kind)
}

// inRead and inWrite report whether notebook id is in the scope, reading
// the tree again first when it lacks id (a notebook a sync made).
func (c *call) inRead(id string) bool {
	return c.in(id, func(s sets) notebookscope.Set { return s.read })
}
func (c *call) inWrite(id string) bool {
	return c.in(id, func(s sets) notebookscope.Set { return s.write })
}

func (c *call) in(id string, pick func(sets) notebookscope.Set) bool {
	if pick(c.s).Has(id) {
		return true
	}
	if s, reloaded, err := c.v.reloadFor(c.ctx, c.sc, c.tree, id); err == nil && reloaded {
		c.s = s
		return pick(s).Has(id)
	}
	return false
}

// mayCreateIn allows a create, move or restore into notebook parent (""
// is the top of the tree: only for a caller writing every notebook).
func (c *call) mayCreateIn(parent string) error {
	if parent == "" && !c.s.write.IsAll() || parent != "" && !c.inWrite(parent) {
		return notWritable()
	}
	return nil
}

// mayChange allows a change of object id, whose notebook notebookOf
// finds, when the caller writes that notebook and, for a move, the
// notebook it moves to. An object it may not read is missing.
func (c *call) mayChange(id string, notebookOf func(string) (string, error)) error {
	nb, err := notebookOf(id)
	if err != nil {
		return err
	}
	if !c.inRead(nb) {
		return joplin.ErrHidden
	}
	if !c.inWrite(nb) {
		return notWritable()
	}
	if to, ok := c.bodyString("parent_id"); ok && c.is(http.MethodPut) {
		return c.mayCreateIn(to)
	}
	return nil
}

func (c *call) noteReadable(id string) error {
	nb, err := c.noteParent(id)
	if err != nil {
		return err
	}
	if !c.inRead(nb) {
		return joplin.ErrHidden
	}
	return nil
}

func (c *call) folderReadable(id string) error {
	if !c.inRead(id) {
		return joplin.ErrHidden
	}
	return nil
}

// noteParent reads the notebook of note id; a missing note is Joplin's
// NOT_FOUND.
func (c *call) noteParent(id string) (string, error) {
	var n struct {
		ParentID string `json:"parent_id"`
	}
	err := c.v.c.Get(joplin.WholeJoplin(c.ctx), "/notes/"+url.PathEscape(id), url.Values{"fields": {"id,parent_id"}}, &n)
	return n.ParentID, err
}

// tagReadable: a tag is visible while it is on a visible note, or on no
// note at all (fresh: nothing of another notebook to reveal).
func (c *call) tagReadable(id string) error {
	ok, err := c.tagVisible(id)
	if err != nil {
		return err
	}
	if !ok {
		return joplin.ErrHidden
	}
	return nil
}

func (c *call) tagVisible(id string) (bool, error) {
	if _, ok := c.v.claimed(c.sc, id); ok {
		return true, nil
	}
	type note struct {
		ParentID string `json:"parent_id"`
	}
	notes, err := joplin.ListAll[note](joplin.WholeJoplin(c.ctx), c.v.c, "/tags/"+url.PathEscape(id)+"/notes",
		url.Values{"fields": {"id,parent_id"}}, c.v.maxScan)
	if err != nil {
		return false, err
	}
	if len(notes) == 0 {
		return true, nil
	}
	return slices.ContainsFunc(notes, func(n note) bool { return c.inRead(n.ParentID) }), nil
}

// needFields adds names to the fields the request asks for, so the answer
// says what Narrow needs. A request without fields gets Joplin's default
// fields, which Narrow copes with.
func (c *call) needFields(names ...string) {
	f := c.r.Query.Get("fields")
	if f == "" {
		return
	}
	have := strings.Split(f, ",")
	added := false
	for _, n := range names {
		if !slices.Contains(have, n) {
			have, added = append(have, n), true
		}
	}
	if !added {
		return
	}
	q := url.Values{}
	for k, v := range c.r.Query {
		q[k] = v
	}
	q.Set("fields", strings.Join(have, ","))
	c.r.Query = q
}

// bodyString reads a string field of the write's JSON body.
func (c *call) bodyString(name string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(c.r.Body, &m) != nil {
		return "", false
	}
	raw, ok := m[name]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
