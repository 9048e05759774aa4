package joplinops

import (
	"context"
	"net/url"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// NoteRef names a note in a relation.
type NoteRef struct {
	ID         string `json:"id" schema:"id"`
	Title      string `json:"title" schema:"max=10000"`
	NotebookID string `json:"notebook_id" schema:"max=32"`
	Trashed    bool   `json:"trashed"`
}

// noteRef names n in a relation.
func noteRef(n joplin.Note) NoteRef {
	return NoteRef{ID: n.ID, Title: n.Title, NotebookID: n.ParentID, Trashed: n.DeletedTime > 0}
}

// TagRef names a tag in a relation.
type TagRef struct {
	ID    string `json:"id" schema:"id"`
	Title string `json:"title" schema:"max=10000"`
}

// ResourceRef names a resource in a relation.
type ResourceRef struct {
	ID    string `json:"id" schema:"id"`
	Title string `json:"title" schema:"max=10000"`
	Mime  string `json:"mime" schema:"max=255"`
}

// Relations are the edges get_note can include.
type Relations struct {
	Tags      []TagRef      `json:"tags,omitempty" schema:"max=@max_relations"`
	Resources []ResourceRef `json:"resources,omitempty" schema:"max=@max_relations"`
	Links     []NoteRef     `json:"links,omitempty" schema:"max=@max_relations"`
	Backlinks []NoteRef     `json:"backlinks,omitempty" schema:"max=@max_relations"`
	// Truncated is set when a relation list hit MaxRelations.
	Truncated bool `json:"relations_truncated,omitempty"`
}

// MaxRelations bounds each relation list of one note.
const MaxRelations = 1000

// relations loads the requested edges of note n.
func (o *Ops) relations(ctx context.Context, n joplin.Note, include []string) (Relations, error) {
	var r Relations
	if len(include) == 0 {
		return r, nil
	}
	want := map[string]bool{}
	for _, i := range include {
		want[i] = true
	}
	var resourceIDs map[string]bool
	if want["tags"] {
		tags, err := joplin.ListAll[TagRef](ctx, o.c, "/notes/"+n.ID+"/tags", url.Values{"fields": {"id,title"}}, MaxRelations)
		if err != nil {
			return r, err
		}
		r.Tags = nonNil(tags)
	}
	if want["resources"] || want["links"] {
		res, err := joplin.ListAll[ResourceRef](ctx, o.c, "/notes/"+n.ID+"/resources", url.Values{"fields": {"id,title,mime"}}, MaxRelations)
		if err != nil {
			return r, err
		}
		resourceIDs = map[string]bool{}
		for _, x := range res {
			resourceIDs[x.ID] = true
		}
		if want["resources"] {
			r.Resources = nonNil(res)
		}
	}
	if want["links"] {
		r.Links = []NoteRef{}
		for _, id := range linkedIDs(n.Body) {
			if resourceIDs[id] || id == n.ID || len(r.Links) >= MaxRelations {
				continue
			}
			var target joplin.Note
			err := o.c.Get(ctx, "/notes/"+id, url.Values{"fields": {"id,parent_id,title,deleted_time"}}, &target)
			switch {
			case err == nil:
				r.Links = append(r.Links, noteRef(target))
			case domainerr.HasCode(err, domainerr.NotFound):
				// A dangling link, or a link to a notebook or tag: not a note.
			default:
				return r, err
			}
		}
	}
	if want["backlinks"] {
		back, err := o.notesLinkingTo(ctx, n.ID)
		if err != nil {
			return r, err
		}
		if len(back) > MaxRelations {
			back, r.Truncated = back[:MaxRelations], true
		}
		r.Backlinks = back
	}
	return r, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
