//go:build integration

package okfbridge

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// TestRealJoplinRoundTrip (issue 37): a notebook of 50 notes on real
// Joplin (links between them, tags, a resource, a long note, non-ASCII
// titles) is exported, validates with no error, and previews back with no
// change; three concepts edited and one added preview as exactly those
// four; applying the changes and creating the new note puts them in
// Joplin; undo restores the three notes.
func TestRealJoplinRoundTrip(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	h := harnessFor(t, j.URL(), j.TokenFile, nil)
	nb := h.folder(t, "Forschung – 研究", "")
	res := h.resource(t, "figure.png", []byte("\x89PNG\r\n\x1a\nnot really an image"))
	titles := []string{"Überblick", "Café ☕ Notizen", "笔记", "Ελληνικά", "Plain"}
	ids := make([]string, 50)
	tags := map[string]string{}
	for i := range 50 {
		body := fmt.Sprintf("# Note %d\n\nSome findings, line %d.\n", i, i)
		switch {
		case i == 0:
			body += "![figure](:/" + res + ")\n"
		case i == 7:
			body += strings.Repeat("A long paragraph of the long note, kept whole by the export.\n", 1200)
		}
		if i > 0 && i%5 == 0 {
			body += "Follows [the previous one](:/" + ids[i-1] + ").\n"
		}
		ids[i] = h.note(t, nb, fmt.Sprintf("%s %02d", titles[i%len(titles)], i), body, nil)
		if i%4 == 0 {
			tagNote(t, h, tags, ids[i], "tag "+titles[i%len(titles)])
		}
	}
	out := h.export(t, nb)
	if out.Notes != 50 || out.Assets != 1 {
		t.Fatalf("export: %+v", out)
	}
	h.validate(t)
	if p := h.preview(t, nb); len(p.Changes)+len(p.NewNotes)+len(p.Conflicts)+len(p.Missing) != 0 || p.Unchanged != 50 {
		t.Fatalf("preview of an untouched export: %d changes, %d new, %d conflicts, %d missing, %d unchanged",
			len(p.Changes), len(p.NewNotes), len(p.Conflicts), len(p.Missing), p.Unchanged)
	}
	if again := h.export(t, nb); again.Changed {
		t.Fatalf("a second export of the unchanged notebook changed the bundle: %+v", again)
	}

	edited := []string{ids[3], ids[10], ids[42]}
	before := map[string]note{}
	for _, id := range edited {
		before[id] = h.readNote(t, id)
	}
	retitle := h.readFile(t, ids[3]+".md")
	h.writeFile(t, ids[3]+".md", strings.Replace(retitle, `title: "Ελληνικά 03"`, `title: "Ελληνικά 03, überarbeitet"`, 1))
	for _, id := range edited[1:] {
		c := h.readFile(t, id+".md")
		h.writeFile(t, id+".md", strings.Replace(c, "Some findings", "Curated findings", 1))
	}
	h.writeFile(t, "neue-idee.md", "---\ntype: Idea\ntitle: Neue Idee\ntags: [kuratiert]\n---\nBased on [note 10](/"+ids[10]+".md).\n")
	h.validate(t)
	p := h.preview(t, nb)
	if strings.Join(slices.Sorted(slices.Values(p.Notes)), ",") != strings.Join(slices.Sorted(slices.Values(edited)), ",") || len(p.NewNotes) != 1 || len(p.Conflicts) != 0 || p.Unchanged != 47 {
		t.Fatalf("preview after curating: notes %v, %d new, %d conflicts, %d unchanged", p.Notes, len(p.NewNotes), len(p.Conflicts), p.Unchanged)
	}
	var prev struct {
		PlanDigest string `json:"plan_digest"`
	}
	h.must(t, "preview_note_changes", map[string]any{"changes": p.Changes}, &prev)
	var applied struct {
		ReceiptID string `json:"receipt_id"`
	}
	h.must(t, "apply_note_changes", map[string]any{"changes": p.Changes, "plan_digest": prev.PlanDigest}, &applied)
	nn := p.NewNotes[0]
	var created struct {
		ID string `json:"id"`
	}
	h.must(t, "create_note", map[string]any{"notebook_id": nn.NotebookID, "title": nn.Title, "body": nn.Body}, &created)
	if got := h.readNote(t, ids[3]).Title; got != "Ελληνικά 03, überarbeitet" {
		t.Fatalf("title in Joplin after apply: %q", got)
	}
	if got := h.readNote(t, ids[42]).Body; !strings.Contains(got, "Curated findings") {
		t.Fatalf("body in Joplin after apply: %q", got)
	}
	if got := h.readNote(t, created.ID); got.Title != "Neue Idee" || got.Body != "Based on [note 10](:/"+ids[10]+").\n" {
		t.Fatalf("the new note in Joplin: %+v", got)
	}
	h.must(t, "undo_note_changes", map[string]any{"receipt_id": applied.ReceiptID}, nil)
	for _, id := range edited {
		if got := h.readNote(t, id); got.Title != before[id].Title || got.Body != before[id].Body {
			t.Errorf("note %s after undo: %q", id, got.Title)
		}
	}
}

// tagNote tags note with title, making the tag once (Joplin keeps one
// tag per title).
func tagNote(t *testing.T, h *harness, tags map[string]string, noteID, title string) {
	t.Helper()
	id, ok := tags[title]
	if !ok {
		var tg tagRow
		if err := h.jc.Write(t.Context(), "POST", "/tags", nil, map[string]any{"title": title}, &tg); err != nil {
			t.Fatal(err)
		}
		id, tags[title] = tg.ID, tg.ID
	}
	if err := h.jc.Write(t.Context(), "POST", "/tags/"+id+"/notes", nil, map[string]any{"id": noteID}, nil); err != nil {
		t.Fatal(err)
	}
}
