package joplinfake

import (
	"fmt"
	"net/http"
	"strings"
)

// routeTags is routes/tags.ts.
func (s *Server) routeTags(req *request, id, link string, params []string) (any, *apiError) {
	if link == "notes" {
		tag := s.tags.get(id)
		if tag == nil {
			return nil, errNotFound(frameTags)
		}
		switch req.method {
		case http.MethodPost:
			props, _, aerr := parseBody(req.body)
			if aerr != nil {
				return nil, aerr
			}
			if props == nil || !truthy(props["id"]) {
				return nil, errBadRequest("Missing note ID", frameTags)
			}
			// Joplin does not check that the note exists.
			nt := s.addNoteTag(id, toStr(props["id"]))
			if nt == nil {
				return nil, nil
			}
			return render(noteTagKind, nt, nil), nil
		case http.MethodDelete:
			if len(params) == 0 || params[0] == "" {
				return nil, errBadRequest("Missing note ID", frameTags)
			}
			s.removeNoteTag(id, params[0])
			return nil, nil
		case http.MethodGet:
			var rows []record
			for _, nt := range s.noteTags.all() {
				if nt.str("tag_id") != id {
					continue
				}
				// Note.preview: trashed notes are included.
				if n := s.notes.get(nt.str("note_id")); n != nil {
					rows = append(rows, n)
				}
			}
			return collectionPage(noteKind, rows, req.query, len(rows) > 0, true)
		}
	}
	return s.defaultAction(tagKind, s.tags, req, id, link)
}

// tagsOfNote is Tag.tagsByNoteId; it does not care whether the note exists.
func (s *Server) tagsOfNote(noteID string) []record {
	ids := map[string]bool{}
	for _, nt := range s.noteTags.rows {
		if nt.str("note_id") == noteID {
			ids[nt.str("tag_id")] = true
		}
	}
	var out []record
	for _, t := range s.tags.all() {
		if ids[t.str("id")] {
			out = append(out, t)
		}
	}
	return out
}

// tagByTitle is Tag.loadByTitle (title = ? COLLATE NOCASE).
func (s *Server) tagByTitle(title string) record {
	for _, t := range s.tags.all() {
		if asciiLower(t.str("title")) == asciiLower(title) {
			return t
		}
	}
	return nil
}

// addNoteTag is Tag.addNote: it returns the new note_tag row, or nil when
// the note already had the tag.
func (s *Server) addNoteTag(tagID, noteID string) record {
	for _, nt := range s.noteTags.rows {
		if nt.str("tag_id") == tagID && nt.str("note_id") == noteID {
			return nil
		}
	}
	ts := s.now()
	nt := noteTagKind.newRecord()
	nt["id"], nt["tag_id"], nt["note_id"] = newID(), tagID, noteID
	for _, f := range []string{"created_time", "updated_time", "user_created_time", "user_updated_time"} {
		nt[f] = ts
	}
	s.noteTags.insert(nt)
	return nt
}

func (s *Server) removeNoteTag(tagID, noteID string) {
	for id, nt := range s.noteTags.rows {
		if nt.str("tag_id") == tagID && nt.str("note_id") == noteID {
			s.noteTags.remove(id)
		}
	}
}

// setNoteTagsByTitles is Tag.setNoteTagsByTitles: titles are trimmed and
// lower-cased, missing tags are created, and tags not listed are removed
// from the note.
func (s *Server) setNoteTagsByTitles(noteID string, titles []string) {
	previous := s.tagsOfNote(noteID)
	added := map[string]bool{}
	for _, title := range titles {
		title = strings.ToLower(strings.TrimSpace(title))
		if title == "" {
			continue
		}
		tag := s.tagByTitle(title)
		if tag == nil {
			ts := s.now()
			tag = tagKind.newRecord()
			tag["id"], tag["title"] = newID(), title
			for _, f := range []string{"created_time", "updated_time", "user_created_time", "user_updated_time"} {
				tag[f] = ts
			}
			s.tags.insert(tag)
		}
		s.addNoteTag(tag.str("id"), noteID)
		added[title] = true
	}
	for _, t := range previous {
		if !added[strings.ToLower(t.str("title"))] {
			s.removeNoteTag(t.str("id"), noteID)
		}
	}
}

// checkTagTitle is the user-side validation of Tag.save: the title is
// trimmed and must not belong to another tag, compared case-insensitively.
// Real Joplin 3.5.1 stores the title's case as given (verified against the
// CLI server); only its error message is lower-cased.
func (s *Server) checkTagTitle(t record, props map[string]any) *apiError {
	v, ok := props["title"]
	if !ok {
		return nil
	}
	str, isStr := v.(string)
	if !isStr {
		return errTypeError("o.title.trim is not a function", frameTagSave)
	}
	title := strings.TrimSpace(str)
	if other := s.tagByTitle(strings.ToLower(title)); other != nil && other.str("id") != t.str("id") {
		return errInternal(fmt.Sprintf("The tag %q already exists. Please choose a different name.", strings.ToLower(title)), frameTagSave)
	}
	t["title"] = title
	return nil
}

// defaultAction is utils/defaultAction.ts, shared by folders, tags and
// resources: GET one or a page, PUT merges the body into the item, DELETE
// removes it (404 when missing), POST creates one.
func (s *Server) defaultAction(k *kind, t *table, req *request, id, link string) (any, *apiError) {
	if link != "" {
		return nil, errNotFound(frameDefaultMethod)
	}
	switch {
	case req.method == http.MethodGet && id != "":
		return single(k, t.get(id), req.query)
	case req.method == http.MethodGet:
		return sqlPage(k, t.all(), req.query)
	case req.method == http.MethodPut && id != "":
		old := t.get(id)
		if old == nil {
			return nil, errNotFound(frameDefaultAction)
		}
		props, aerr := parseObject(req.body, frameDefaultMethod)
		if aerr != nil {
			return nil, aerr
		}
		return s.save(k, t, old.clone(), without(props, readonly(http.MethodPut)), false)
	case req.method == http.MethodDelete && id != "":
		if t.get(id) == nil {
			return nil, errNotFound(frameDefaultAction)
		}
		t.remove(id)
		switch k {
		case tagKind:
			for ntID, nt := range s.noteTags.rows {
				if nt.str("tag_id") == id {
					s.noteTags.remove(ntID)
				}
			}
		case resourceKind:
			delete(s.blobs, id)
		}
		return nil, nil
	case req.method == http.MethodPost:
		props, aerr := parseObject(req.body, frameDefaultMethod)
		if aerr != nil {
			return nil, aerr
		}
		return s.save(k, t, k.newRecord(), without(props, readonly(http.MethodPost)), true)
	}
	return nil, errMethodNotAllowed(frameDefaultMethod)
}

// save is ModelClass.save with userSideValidation and automatic
// timestamps: the model-specific checks, then BaseModel's validation, then
// the INSERT or UPDATE. updated_time and user_updated_time are always set to
// now; on insert created_time too, and user_created_time unless given.
func (s *Server) save(k *kind, t *table, r record, props map[string]any, isNew bool) (any, *apiError) {
	k.apply(r, props, nil)
	if isNew && !truthy(props["id"]) {
		r["id"] = ""
	}
	switch k {
	case tagKind:
		if aerr := s.checkTagTitle(r, props); aerr != nil {
			return nil, aerr
		}
	case folderKind:
		if aerr := saveFolderChecks(r); aerr != nil {
			return nil, aerr
		}
	}
	if aerr := validate(props, isNew); aerr != nil {
		return nil, aerr
	}
	ts := s.now()
	r["updated_time"], r["user_updated_time"] = ts, ts
	if isNew {
		if r.str("id") == "" {
			r["id"] = newID()
		} else if t.get(r.str("id")) != nil {
			return nil, errUnique(k.table)
		}
		r["created_time"] = ts
		if _, ok := props["user_created_time"]; !ok || r.int("user_created_time") == 0 {
			r["user_created_time"] = ts
		}
		t.insert(r)
	} else {
		t.rows[r.str("id")] = r
	}
	return render(k, r, nil), nil
}
