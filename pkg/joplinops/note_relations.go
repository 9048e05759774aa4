package joplinops

import (
	"context"
	"net/url"

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/schema"
)

// NoteRef names a note in a relation.
type NoteRef struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	NotebookID string `json:"notebook_id"`
	Trashed    bool   `json:"trashed"`
}

func (n apiNote) ref() NoteRef {
	return NoteRef{ID: n.ID, Title: n.Title, NotebookID: n.ParentID, Trashed: n.DeletedTime > 0}
}

// TagRef names a tag in a relation.
type TagRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// ResourceRef names a resource in a relation.
type ResourceRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Mime  string `json:"mime"`
}

// Relations are the edges get_note can include.
type Relations struct {
	Tags      []TagRef      `json:"tags,omitempty"`
	Resources []ResourceRef `json:"resources,omitempty"`
	Links     []NoteRef     `json:"links,omitempty"`
	Backlinks []NoteRef     `json:"backlinks,omitempty"`
	// Truncated is set when a relation list hit MaxRelations.
	Truncated bool `json:"relations_truncated,omitempty"`
}

// MaxRelations bounds each relation list of one note.
const MaxRelations = 1000

// noteRefSchema is the shape of a NoteRef.
func noteRefSchema() schema.S {
	return schema.Object("", map[string]any{
		"id":          schema.ID(""),
		"title":       schema.String("", 0, 10_000),
		"notebook_id": schema.String("", 0, 32),
		"trashed":     schema.Bool(""),
	}, "id", "title", "notebook_id", "trashed")
}

// addRelations adds the optional relation properties of get_note to the
// note shape out; links and backlinks share one note_ref definition.
func addRelations(out schema.S) {
	props := out["properties"].(map[string]any)
	props["tags"] = schema.Array("", schema.Object("", map[string]any{
		"id": schema.ID(""), "title": schema.String("", 0, 10_000),
	}, "id", "title"), MaxRelations)
	props["resources"] = schema.Array("", schema.Object("", map[string]any{
		"id": schema.ID(""), "title": schema.String("", 0, 10_000), "mime": schema.String("", 0, 255),
	}, "id", "title", "mime"), MaxRelations)
	props["links"] = schema.Array("", schema.Ref("note_ref"), MaxRelations)
	props["backlinks"] = schema.Array("", schema.Ref("note_ref"), MaxRelations)
	props["relations_truncated"] = schema.Bool("")
	out["$defs"] = map[string]any{"note_ref": noteRefSchema()}
}

// relations loads the requested edges of note n.
func (o *Ops) relations(ctx context.Context, n apiNote, include []string) (Relations, error) {
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
			var target apiNote
			err := o.c.Get(ctx, "/notes/"+id, url.Values{"fields": {"id,parent_id,title,deleted_time"}}, &target)
			switch {
			case err == nil:
				r.Links = append(r.Links, target.ref())
			case isCode(err, domainerr.NotFound):
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

// isCode reports whether err carries the domain error code.
func isCode(err error, code domainerr.Code) bool {
	de, ok := domainerr.As(err)
	return ok && de.Code == code
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
