package joplinops

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/notebridge/notebridge/pkg/core/registry"
)

// The search/fetch convention of ChatGPT's deep research and company
// knowledge (docs/chatgpt-search-fetch.md): search hits carry id, title and
// url under results; fetch(id) returns {id, title, text, url, metadata}.

// NoteURL is the link that opens a note in the Joplin apps.
func NoteURL(id string) string {
	return "joplin://x-callback-url/openNote?id=" + url.QueryEscape(id)
}

// itemURL is the link that opens a search hit of type typ.
func itemURL(typ, id string) string {
	switch typ {
	case "notebook":
		return "joplin://x-callback-url/openFolder?id=" + url.QueryEscape(id)
	case "tag":
		return "joplin://x-callback-url/openTag?id=" + url.QueryEscape(id)
	}
	return NoteURL(id)
}

type fetchIn struct {
	ID string `json:"id" jsonschema:"A note id from search." schema:"id"`
}

// fetchMeta is what fetch says about a note beside its text.
type fetchMeta struct {
	NotebookID  string `json:"notebook_id" schema:"id"`
	CreatedTime string `json:"created_time" jsonschema:"Unix ms." schema:"max=20"`
	UpdatedTime string `json:"updated_time" jsonschema:"Unix ms." schema:"max=20"`
	IsTodo      string `json:"is_todo,omitempty" schema:"enum=true"`
	// Truncated is set when text holds only the first part of a body
	// longer than MaxInlineBody; BodyBytes and More then give its size and
	// how to read the rest.
	Truncated string `json:"truncated,omitempty" schema:"enum=true"`
	BodyBytes string `json:"body_bytes,omitempty" schema:"max=20"`
	More      string `json:"more,omitempty" schema:"max=500"`
}

type fetchOut struct {
	ID       string    `json:"id" schema:"id"`
	Title    string    `json:"title" schema:"max=10000"`
	Text     string    `json:"text" schema:"max=100000000"`
	URL      string    `json:"url" schema:"max=200"`
	Metadata fetchMeta `json:"metadata"`
}

func (o *Ops) fetch() registry.Operation {
	desc := "Fetch a note found by search: its Markdown text (a long one cut, as metadata.truncated says; get_note reads it by section), a joplin:// link that opens it, and metadata. Trashed notes are not found."
	m := o.meta("fetch", "Fetch note", desc, registry.EffectRead)
	m.Exposure = mcpTransports
	return registry.Define(m, func(ctx context.Context, in fetchIn) (fetchOut, error) {
		n, err := o.loadNote(ctx, in.ID, noteFields)
		if err != nil {
			return fetchOut{}, err
		}
		if n.DeletedTime > 0 {
			return fetchOut{}, notFound("note", in.ID)
		}
		out := fetchOut{ID: n.ID, Title: n.Title, Text: n.Body, URL: NoteURL(n.ID), Metadata: fetchMeta{
			NotebookID: n.ParentID, CreatedTime: strconv.FormatInt(n.CreatedTime, 10), UpdatedTime: strconv.FormatInt(n.UpdatedTime, 10),
		}}
		if n.IsTodo == 1 {
			out.Metadata.IsTodo = "true"
		}
		if cut, truncated := cutText(n.Body, MaxInlineBody); truncated {
			out.Text = cut
			out.Metadata.Truncated, out.Metadata.BodyBytes = "true", strconv.Itoa(len(n.Body))
			out.Metadata.More = fmt.Sprintf("The note is %d bytes; this is its first %d. %s", len(n.Body), len(cut), moreHint)
		}
		return out, nil
	})
}
