package joplinops

import (
	"context"
	"net/url"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// linkedIDs returns the distinct ids body links to, in order of appearance.
func linkedIDs(body string) []string { return joplin.LinkedIDs(body) }

// scanNotes streams every note, trashed ones included, page by page, with
// the given fields, calling fn for each. At most MaxScan notes are read;
// beyond that it fails rather than answer from a partial scan. Bodies are
// never all held at once.
func (o *Ops) scanNotes(ctx context.Context, fields string, fn func(joplin.Note)) error {
	seen := 0
	q := url.Values{"fields": {fields}, "include_deleted": {"1"}, "order_by": {"created_time"}, "order_dir": {"ASC"}}
	return joplin.EachPage(ctx, o.c, "/notes", q, func(_ int, notes []joplin.Note) error {
		for _, n := range notes {
			fn(n)
		}
		seen += len(notes)
		if seen > o.limits.MaxScan {
			return domainerr.New(domainerr.JoplinError, "Joplin holds more than %d notes; the scan was stopped", o.limits.MaxScan)
		}
		return nil
	})
}

// notesLinkingTo lists the notes whose body links to id (backlinks, or the
// notes using a resource). The CLI server's own /resources/:id/notes index
// is never built, so the bodies are scanned.
func (o *Ops) notesLinkingTo(ctx context.Context, id string) ([]NoteRef, error) {
	needle := ":/" + id
	out := []NoteRef{}
	err := o.scanNotes(ctx, "id,parent_id,title,body,deleted_time", func(n joplin.Note) {
		if n.ID != id && containsLink(n.Body, needle) {
			out = append(out, noteRef(n))
		}
	})
	return out, err
}

// containsLink reports whether body holds needle (":/<id>") not followed
// by another hex digit, so one id is never mistaken for a longer one.
func containsLink(body, needle string) bool {
	for {
		j := strings.Index(body, needle)
		if j < 0 {
			return false
		}
		body = body[j+len(needle):]
		if body == "" || !isHex(body[0]) {
			return true
		}
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }
