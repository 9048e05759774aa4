package joplin

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// Kind says what one write changed.
type Kind string

// The kinds of change notebridge's writes make. A restore is a save: it
// clears deleted_time.
const (
	NoteSaved       Kind = "note"             // created, updated, moved or restored
	NoteTrashed     Kind = "note_trashed"     // moved to the trash
	NotebookSaved   Kind = "notebook"         // created, renamed, moved or restored
	NotebookTrashed Kind = "notebook_trashed" // moved to the trash with its notes
	TagSaved        Kind = "tag"              // created or renamed
	TagDeleted      Kind = "tag_deleted"
	TagLinked       Kind = "tag_linked"   // a note tagged
	TagUnlinked     Kind = "tag_unlinked" // a note untagged
	ResourceSaved   Kind = "resource"     // created or changed
	ResourceDeleted Kind = "resource_deleted"
)

// Write is one write Joplin accepted, as the Data API's path and body say
// it.
type Write struct {
	Kind Kind
	// ID is the object written: the note, notebook, tag or resource (for
	// a tag link, the tag).
	ID string
	// NoteID is the note of a tag link.
	NoteID string
	// Answer is Joplin's answer: the object as saved, for a POST or PUT.
	Answer []byte
}

// Observer is told of every write Joplin accepted, in order, before the
// write returns to its caller. It runs in the caller's goroutine and must
// not block for long.
type Observer func(ctx context.Context, w Write)

// Observe adds o to the observers of c's writes; call it before c is used
// (joplinstack.New assembles the service's client in one call).
func (c *Client) Observe(o Observer) { c.observers = append(c.observers, o) }

// wrote tells the observers about r, which Joplin accepted with answer.
func (c *Client) wrote(ctx context.Context, r request, answer []byte) {
	if len(c.observers) == 0 {
		return
	}
	w := classify(r, answer)
	// Observers keep notebridge's own state (the search index): what
	// they read must not be narrowed to the writing caller's view.
	ctx = WholeJoplin(ctx)
	for _, o := range c.observers {
		o(ctx, w)
	}
}

// classify reads what r changed from its method, path and body. A write
// to a path outside the Data API's objects keeps an empty Kind.
func classify(r request, answer []byte) Write {
	w := Write{Answer: answer}
	parts := strings.Split(strings.Trim(r.path, "/"), "/")
	if len(parts) > 1 {
		w.ID = parts[1]
	} else {
		var created struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(answer, &created) // no id: the observers re-read
		w.ID = created.ID
	}
	del := r.method == http.MethodDelete
	switch {
	case parts[0] == "notes" && len(parts) <= 2:
		w.Kind = pick(del, NoteTrashed, NoteSaved)
	case parts[0] == "folders" && len(parts) <= 2:
		w.Kind = pick(del, NotebookTrashed, NotebookSaved)
	case parts[0] == "tags" && len(parts) <= 2:
		w.Kind = pick(del, TagDeleted, TagSaved)
	case parts[0] == "tags" && len(parts) == 4 && parts[2] == "notes" && del:
		w.Kind, w.NoteID = TagUnlinked, parts[3]
	case parts[0] == "tags" && len(parts) == 3 && parts[2] == "notes" && !del:
		var link struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(r.body, &link)
		w.Kind, w.NoteID = TagLinked, link.ID
	case parts[0] == "resources" && len(parts) <= 2:
		w.Kind = pick(del, ResourceDeleted, ResourceSaved)
	}
	return w
}

func pick(del bool, ifDelete, otherwise Kind) Kind {
	if del {
		return ifDelete
	}
	return otherwise
}
