package scopeview

import (
	"bytes"
	"encoding/json"
	"net/url"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/revision"
)

// narrow returns what the caller may see of an admitted read's answer.
func (c *call) narrow(answer []byte) ([]byte, error) {
	p, n := c.parts, len(c.parts)
	switch {
	case p[0] == "notes" && n == 1, p[0] == "tags" && n == 3 && p[2] == "notes":
		return filterItems(answer, c.keepNote)
	case p[0] == "notes" && n == 2:
		return c.single(answer, c.keepNote)
	case p[0] == "folders" && n == 1:
		return filterItems(answer, c.keepFolder)
	case p[0] == "folders" && n == 2:
		return c.single(answer, c.keepFolder)
	case p[0] == "tags" && n == 1:
		return filterItems(answer, c.keepTag)
	case p[0] == "tags" && n == 2:
		return c.single(answer, c.retitle)
	case p[0] == "notes" && n == 3 && p[2] == "tags":
		return filterItems(answer, c.retitle)
	case p[0] == "resources" && n == 1:
		linked, err := c.linkedResources()
		if err != nil {
			return nil, err
		}
		return filterItems(answer, func(it json.RawMessage) (json.RawMessage, bool, error) {
			id, err := itemID(it)
			return it, linked[id].read, err
		})
	case p[0] == "revisions" && n == 1:
		return filterItems(answer, c.keepRevision)
	case p[0] == "revisions" && n == 2:
		return c.single(answer, c.keepRevision)
	case p[0] == "search":
		switch c.r.Query.Get("type") {
		case "folder":
			return filterItems(answer, c.keepFolder)
		case "tag":
			return filterItems(answer, c.keepTag)
		}
		return filterItems(answer, c.keepNote)
	}
	// Admitted reads of one visible object or of a visible object's
	// relations pass as they are.
	return answer, nil
}

// keep decides one item of an answer: whether the caller sees it, and
// as what.
type keep func(item json.RawMessage) (json.RawMessage, bool, error)

// single answers one object, or ErrHidden when the caller may not see it.
func (c *call) single(answer []byte, k keep) ([]byte, error) {
	out, ok, err := k(answer)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, joplin.ErrHidden
	}
	return out, nil
}

// keepNote keeps a note in a readable notebook. An answer without the
// notebook (Joplin's default fields) makes the view look it up.
func (c *call) keepNote(it json.RawMessage) (json.RawMessage, bool, error) {
	var n struct {
		ID       string  `json:"id"`
		ParentID *string `json:"parent_id"`
	}
	if err := json.Unmarshal(it, &n); err != nil {
		return nil, false, undecodable()
	}
	if n.ParentID == nil {
		parent, err := c.noteParent(n.ID)
		if err != nil {
			return nil, false, err
		}
		n.ParentID = &parent
	}
	return it, c.inRead(*n.ParentID), nil
}

// keepRevision keeps a revision of a readable note. A revision of any
// other item, or of a note deleted for good, is not shown.
func (c *call) keepRevision(it json.RawMessage) (json.RawMessage, bool, error) {
	var r struct {
		ItemType int    `json:"item_type"`
		ItemID   string `json:"item_id"`
	}
	if err := json.Unmarshal(it, &r); err != nil {
		return nil, false, undecodable()
	}
	if r.ItemType != revision.ItemTypeNote || r.ItemID == "" {
		return it, false, nil
	}
	nb, ok := c.notebookOf[r.ItemID]
	if !ok {
		var err error
		nb, err = c.noteParent(r.ItemID)
		if domainerr.HasCode(err, domainerr.NotFound) {
			nb, err = "", nil
		}
		if err != nil {
			return nil, false, err
		}
		if c.notebookOf == nil {
			c.notebookOf = map[string]string{}
		}
		c.notebookOf[r.ItemID] = nb
	}
	return it, nb != "" && c.inRead(nb), nil
}

// keepFolder keeps a readable notebook; one whose parent the caller may
// not read is shown at the top of its tree.
func (c *call) keepFolder(it json.RawMessage) (json.RawMessage, bool, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(it, &f); err != nil {
		return nil, false, undecodable()
	}
	var id, parent string
	_ = json.Unmarshal(f["id"], &id)
	if !c.inRead(id) {
		return nil, false, nil
	}
	raw, has := f["parent_id"]
	if !has || json.Unmarshal(raw, &parent) != nil || parent == "" || c.inRead(parent) {
		return it, true, nil
	}
	f["parent_id"] = json.RawMessage(`""`)
	out, err := json.Marshal(f)
	return out, err == nil, err
}

// keepTag keeps a visible tag (retitle).
func (c *call) keepTag(it json.RawMessage) (json.RawMessage, bool, error) {
	id, err := itemID(it)
	if err != nil {
		return nil, false, err
	}
	if ok, err := c.tagVisible(id); !ok || err != nil {
		return nil, false, err
	}
	return c.retitle(it)
}

// retitle shows a tag the caller's scope claimed (View.Claim) with the
// title it gave, as the fresh tag it made; other tags pass as they are.
func (c *call) retitle(it json.RawMessage) (json.RawMessage, bool, error) {
	var t map[string]json.RawMessage
	if err := json.Unmarshal(it, &t); err != nil {
		return nil, false, undecodable()
	}
	var id string
	_ = json.Unmarshal(t["id"], &id)
	title, claimed := c.v.claimed(c.sc, id)
	if _, has := t["title"]; !claimed || !has {
		return it, true, nil
	}
	t["title"], _ = json.Marshal(title)
	out, err := json.Marshal(t)
	return out, err == nil, err
}

func itemID(it json.RawMessage) (string, error) {
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(it, &o); err != nil {
		return "", undecodable()
	}
	return o.ID, nil
}

// filterItems keeps the items of a list answer that k keeps; has_more
// stays Joplin's, so paging goes on past a page it emptied.
func filterItems(answer []byte, k keep) ([]byte, error) {
	var page struct {
		Items   []json.RawMessage `json:"items"`
		HasMore bool              `json:"has_more"`
	}
	if err := json.Unmarshal(answer, &page); err != nil {
		return nil, undecodable()
	}
	kept := make([]json.RawMessage, 0, len(page.Items))
	changed := false
	for _, it := range page.Items {
		out, ok, err := k(it)
		if err != nil {
			return nil, err
		}
		if ok {
			kept = append(kept, out)
			changed = changed || !bytes.Equal(out, it)
		}
	}
	if len(kept) == len(page.Items) && !changed {
		return answer, nil
	}
	page.Items = kept
	return json.Marshal(page)
}

func undecodable() error {
	return domainerr.New(domainerr.JoplinError, "Joplin returned a response that could not be decoded")
}

// linkState says which notes link one resource.
type linkState struct{ linked, read, write bool }

// linkedResources scans every note once and reports, per resource id,
// whether any note, a readable one and a writable one link it. The CLI
// server never builds its /resources/:id/notes index, so bodies are read.
func (c *call) linkedResources() (map[string]linkState, error) {
	out := map[string]linkState{}
	seen := 0
	q := url.Values{"fields": {"id,parent_id,body"}, "include_deleted": {"1"}, "order_by": {"created_time"}, "order_dir": {"ASC"}}
	err := joplin.EachPage(joplin.WholeJoplin(c.ctx), c.v.c, "/notes", q, func(_ int, notes []joplin.Note) error {
		for _, n := range notes {
			r, w := c.inRead(n.ParentID), c.inWrite(n.ParentID)
			for _, id := range joplin.LinkedIDs(n.Body) {
				st := out[id]
				out[id] = linkState{linked: true, read: st.read || r, write: st.write || w}
			}
		}
		if seen += len(notes); seen > c.v.maxScan {
			return domainerr.New(domainerr.JoplinError, "Joplin holds more than %d notes; the scan was stopped", c.v.maxScan)
		}
		return nil
	})
	return out, err
}

// resourceReadable: a resource is visible when a visible note links it.
func (c *call) resourceReadable(id string) error {
	linked, err := c.linkedResources()
	if err != nil {
		return err
	}
	if !linked[id].read {
		return joplin.ErrHidden
	}
	return nil
}

// resourceWritable allows changing a resource a writable note links, or
// one no note links yet (the caller just uploaded it: resource ids are
// random, so no other caller can name it).
func (c *call) resourceWritable(id string) error {
	linked, err := c.linkedResources()
	if err != nil {
		return err
	}
	st := linked[id]
	switch {
	case st.write, !st.linked:
		return nil
	case st.read:
		return notWritable()
	}
	return joplin.ErrHidden
}
