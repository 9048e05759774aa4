package joplinfake

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// routeFolders is routes/folders.ts.
func (s *Server) routeFolders(req *request, id, link string, _ []string) (any, *apiError) {
	q := req.query
	switch {
	case req.method == http.MethodGet && id == "":
		var rows []record
		for _, f := range s.folders.all() {
			if f.int("deleted_time") == 0 {
				rows = append(rows, f)
			}
		}
		if q.Get("as_tree") != "" {
			return s.folderTree(rows, q)
		}
		return sqlPage(folderKind, rows, q)
	case req.method == http.MethodGet && link == "notes":
		if s.folders.get(id) == nil {
			return nil, errTypeError("Cannot read properties of null (reading 'id')", frameFolders)
		}
		var rows []record
		for _, n := range s.notes.all() {
			if n.str("parent_id") == id && n.int("deleted_time") == 0 {
				rows = append(rows, n)
			}
		}
		return sqlPage(noteKind, rows, q)
	case req.method == http.MethodGet && link != "":
		return nil, errNotFound(frameFolders)
	case req.method == http.MethodDelete:
		// Any link is ignored: DELETE /folders/:id/notes deletes the folder.
		if s.folders.get(id) != nil {
			s.deleteFolder(id, q.Get("permanent") != "1", s.now())
		}
		return nil, nil
	}
	return s.defaultAction(folderKind, s.folders, req, id, link)
}

// deleteFolder is Folder.batchDelete with deleteChildren: the folder's
// notes that are not already in the trash, then all its sub-folders,
// recursively, then the folder itself. With toTrash the items get a
// deleted_time; otherwise they are removed (notes already in the trash are
// left behind, as Joplin does).
func (s *Server) deleteFolder(id string, toTrash bool, ts int64) {
	for _, n := range s.notes.all() {
		if n.str("parent_id") != id || n.int("deleted_time") != 0 {
			continue
		}
		if toTrash {
			n["deleted_time"], n["updated_time"] = ts, ts
			s.noteChanged(n.str("id"), changeUpdate)
		} else {
			s.deleteNotePermanently(n.str("id"))
		}
	}
	for _, sub := range s.folders.all() {
		if sub.str("parent_id") == id && sub.str("id") != id {
			s.deleteFolder(sub.str("id"), toTrash, ts)
		}
	}
	if f := s.folders.get(id); f != nil {
		if toTrash {
			f["deleted_time"], f["updated_time"], f["user_updated_time"] = ts, ts, ts
		} else {
			s.folders.remove(id)
		}
	}
}

// folderTree answers GET /folders?as_tree=1: a bare JSON array of root
// notebooks, each with a "children" array when it has sub-notebooks.
// Notebooks whose parent is missing are left out, as in Folder.allAsTree.
func (s *Server) folderTree(rows []record, q url.Values) (any, *apiError) {
	fields, aerr := requestFields(folderKind, q, true)
	if aerr != nil {
		return nil, aerr
	}
	sorted := append([]record(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return strings.ToLower(sorted[i].str("title")) < strings.ToLower(sorted[j].str("title"))
	})
	var build func(parent string, depth int) []map[string]any
	build = func(parent string, depth int) []map[string]any {
		out := []map[string]any{}
		if depth > 100 {
			return out
		}
		for _, f := range sorted {
			if f.str("parent_id") != parent {
				continue
			}
			item := project(f, fields)
			if children := build(f.str("id"), depth+1); len(children) > 0 {
				item["children"] = children
			}
			out = append(out, item)
		}
		return out
	}
	return build("", 0), nil
}

// saveFolderChecks is the user-side validation of Folder.save: no folder as
// its own parent, leading slashes stripped from the title, and the reserved
// "Conflicts" title refused.
func saveFolderChecks(f record) *apiError {
	if f.str("id") != "" && f.str("id") == f.str("parent_id") {
		return errInternal("Parent ID cannot be the same as ID", frameFolderSave)
	}
	f["title"] = strings.TrimLeft(f.str("title"), `/\`)
	if f.str("title") == "Conflicts" {
		return errInternal(`Notebooks cannot be named "Conflicts", which is a reserved title.`, frameFolderSave)
	}
	return nil
}
