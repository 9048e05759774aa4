package joplinfake

import (
	"html"
	"net/http"
	"regexp"
	"strings"
)

// Values Joplin's CLI stamps on new notes (Setting appName and appId).
const (
	cliAppName = "joplin"
	cliAppID   = "net.cozic.joplin-cli"
)

// routeNotes is routes/notes.ts.
func (s *Server) routeNotes(req *request, id, link string, _ []string) (any, *apiError) {
	q := req.query
	switch req.method {
	case http.MethodGet:
		switch {
		case link == "tags":
			return collectionPage(tagKind, s.tagsOfNote(id), q, false, true)
		case link == "resources":
			n := s.notes.get(id)
			if n == nil {
				return nil, errNotFound(frameNotes)
			}
			var rows []record
			for _, rid := range linkedIDs(n.str("body")) {
				if r := s.resources.get(rid); r != nil {
					rows = append(rows, r)
				}
			}
			return collectionPage(resourceKind, rows, q, len(rows) > 0, true)
		case link != "":
			return nil, errNotFound(frameNotes)
		case id != "":
			return single(noteKind, s.notes.get(id), q)
		}
		var rows []record
		for _, n := range s.notes.all() {
			if q.Get("include_deleted") != "1" && n.int("deleted_time") != 0 {
				continue
			}
			if q.Get("include_conflicts") != "1" && n.int("is_conflict") != 0 {
				continue
			}
			rows = append(rows, n)
		}
		return sqlPage(noteKind, rows, q)
	case http.MethodPost:
		// The route ignores any id or link in the path.
		return s.createNote(req)
	case http.MethodPut:
		return s.updateNote(req, id)
	case http.MethodDelete:
		if n := s.notes.get(id); n != nil {
			if q.Get("permanent") == "1" {
				s.deleteNotePermanently(id)
			} else {
				ts := s.now()
				n["deleted_time"], n["updated_time"] = ts, ts
				s.noteChanged(id, changeUpdate)
			}
		}
		return nil, nil
	}
	if link != "" {
		return nil, errNotFound(frameDefaultMethod)
	}
	return nil, errMethodNotAllowed(frameDefaultMethod)
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// createNote is the POST branch of routes/notes.ts (requestNoteToNote and
// Note.save): only a fixed set of properties is taken from the body.
func (s *Server) createNote(req *request) (any, *apiError) {
	props, aerr := parseObject(req.body, frameNotes)
	if aerr != nil {
		return nil, aerr
	}
	n := noteKind.newRecord()
	if truthy(props["title"]) {
		n["title"] = toStr(props["title"])
	}
	if truthy(props["body"]) {
		n["body"] = toStr(props["body"])
	}
	id := ""
	if truthy(props["id"]) {
		id = toStr(props["id"])
	}
	if truthy(props["body_html"]) {
		// Joplin converts HTML to Markdown with Turndown; the fake only
		// strips the tags.
		h := toStr(props["body_html"])
		if toStr(props["convert_to"]) == "html" {
			n["body"], n["markup_language"] = h, int64(2)
		} else {
			n["body"] = strings.TrimSpace(html.UnescapeString(htmlTag.ReplaceAllString(h, "")))
		}
	}
	if truthy(props["parent_id"]) {
		n["parent_id"] = toStr(props["parent_id"])
	} else {
		f := s.defaultFolder()
		if f == nil {
			return nil, errInternal("Cannot find folder for note", frameRequestNote)
		}
		n["parent_id"] = f.str("id")
	}
	for _, f := range []string{"source_url", "author", "source", "user_updated_time", "user_created_time",
		"is_todo", "todo_due", "todo_completed", "markup_language", "longitude", "latitude", "altitude"} {
		if v, ok := props[f]; ok {
			n[f] = noteKind.convert(f, v)
		}
	}
	if n.int("markup_language") == 0 {
		n["markup_language"] = int64(1)
	}
	if aerr := validate(map[string]any{"id": id}, true); aerr != nil {
		return nil, aerr
	}
	if aerr := validate(props, false); aerr != nil {
		return nil, aerr
	}
	if id == "" {
		id = newID()
	} else if s.notes.get(id) != nil {
		return nil, errUnique("notes")
	}
	ts := s.now()
	n["id"], n["created_time"], n["updated_time"] = id, ts, ts
	for _, f := range []string{"user_created_time", "user_updated_time"} {
		if _, ok := props[f]; !ok {
			n[f] = ts
		}
	}
	if n.str("source") == "" {
		n["source"] = cliAppName
	}
	n["source_application"] = cliAppID
	n["order"] = float64(ts)
	s.notes.insert(n)
	s.noteChanged(id, changeCreate)
	if tags, ok := props["tags"]; ok && truthy(tags) {
		t, isStr := tags.(string)
		if !isStr {
			return nil, errTypeError("requestNote.tags.split is not a function", frameNotes)
		}
		s.setNoteTagsByTitles(id, strings.Split(t, ","))
	}
	return render(noteKind, n, nil), nil
}

// defaultFolder is Folder.defaultFolder: the most recently created
// notebook that is not in the trash.
func (s *Server) defaultFolder() record {
	var best record
	for _, f := range s.folders.all() {
		if f.int("deleted_time") != 0 {
			continue
		}
		if best == nil || f.int("created_time") >= best.int("created_time") {
			best = f
		}
	}
	return best
}

// updateNote is the PUT branch of routes/notes.ts: merge the body (minus
// read-only properties) into the note, stamp updated_time and, unless given,
// user_updated_time; then replace the tag set when "tags" is present.
func (s *Server) updateNote(req *request, id string) (any, *apiError) {
	n := s.notes.get(id)
	if n == nil {
		return nil, errNotFound(frameNotes)
	}
	props, aerr := parseObject(req.body, frameNotes)
	if aerr != nil {
		return nil, aerr
	}
	newProps := without(props, readonly(http.MethodPut))
	if aerr := validate(newProps, false); aerr != nil {
		return nil, aerr
	}
	ts := s.now()
	noteKind.apply(n, newProps, nil)
	if _, ok := newProps["user_updated_time"]; !ok {
		n["user_updated_time"] = ts
	}
	n["updated_time"] = ts
	s.noteChanged(id, changeUpdate)
	if tags, ok := props["tags"]; ok && (truthy(tags) || tags == "") {
		t, isStr := tags.(string)
		if !isStr {
			return nil, errTypeError("requestNote.tags.split is not a function", frameNotes)
		}
		s.setNoteTagsByTitles(id, strings.Split(t, ","))
	}
	return render(noteKind, n, nil), nil
}

// deleteNotePermanently removes a note and its tag associations.
func (s *Server) deleteNotePermanently(id string) {
	s.notes.remove(id)
	s.noteChanged(id, changeDelete)
	for ntID, nt := range s.noteTags.rows {
		if nt.str("note_id") == id {
			s.noteTags.remove(ntID)
		}
	}
}
