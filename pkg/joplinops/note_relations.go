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

// ItemRef names a tag or resource in a relation.
type ItemRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Mime  string `json:"mime,omitempty"`
}

// Relations are the edges get_note can include.
type Relations struct {
	Tags      []ItemRef `json:"tags,omitempty"`
	Resources []ItemRef `json:"resources,omitempty"`
	Links     []NoteRef `json:"links,omitempty"`
	Backlinks []NoteRef `json:"backlinks,omitempty"`
	// Truncated is set when a relation list hit MaxRelations.
	Truncated bool `json:"relations_truncated,omitempty"`
}

// MaxRelations bounds each relation list of one note.
const MaxRelations = 1000

func noteRefSchema() schema.S {
	return schema.Object("A note in a relation.", map[string]any{
		"id":          schema.ID("Note id."),
		"title":       schema.String("Title.", 0, 10_000),
		"notebook_id": schema.String("Notebook id.", 0, 32),
		"trashed":     schema.Bool("Whether the note is in the trash."),
	}, "id", "title", "notebook_id", "trashed")
}

func itemRefSchema(desc string) schema.S {
	return schema.Object(desc, map[string]any{
		"id":    schema.ID("Id."),
		"title": schema.String("Title.", 0, 10_000),
		"mime":  schema.String("MIME type, for resources.", 0, 255),
	}, "id", "title")
}

// relationSchemas are the optional relation properties of a note.
func relationSchemas() map[string]any {
	return map[string]any{
		"tags":                schema.Array("Tags on the note (include tags).", itemRefSchema("A tag."), MaxRelations),
		"resources":           schema.Array("Resources the body links to (include resources).", itemRefSchema("A resource."), MaxRelations),
		"links":               schema.Array("Notes the body links to (include links).", noteRefSchema(), MaxRelations),
		"backlinks":           schema.Array("Notes whose body links to this note (include backlinks).", noteRefSchema(), MaxRelations),
		"relations_truncated": schema.Bool("Set when a relation list was cut at its bound."),
	}
}

// relations loads the requested edges of note n.
func (o *Ops) relations(ctx context.Context, n apiNote, include []string) (Relations, error) {
	var r Relations
	want := map[string]bool{}
	for _, i := range include {
		want[i] = true
	}
	var resourceIDs map[string]bool
	if want["tags"] {
		tags, err := joplin.ListAll[ItemRef](ctx, o.c, "/notes/"+n.ID+"/tags", url.Values{"fields": {"id,title"}}, MaxRelations)
		if err != nil {
			return r, err
		}
		r.Tags = nonNil(tags)
	}
	if want["resources"] || want["links"] {
		res, err := joplin.ListAll[ItemRef](ctx, o.c, "/notes/"+n.ID+"/resources", url.Values{"fields": {"id,title,mime"}}, MaxRelations)
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
