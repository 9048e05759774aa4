package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// ReadMoreScenarios covers issue 27: OCR text of attachments, long notes
// read by outline and section, note history with restore, and ChatGPT's
// fetch. History and fetch are MCP-only operations: a run through GPT
// Actions (MaxResponseChars set) checks only the rest.
func ReadMoreScenarios(t *testing.T, env Env) {
	t.Run("ocr_text", func(t *testing.T) { ocrText(t, env) })
	t.Run("long_note_sections", func(t *testing.T) { longNoteSections(t, env) })
	if env.MaxResponseChars == 0 {
		t.Run("note_history", func(t *testing.T) { noteHistory(t, env) })
		t.Run("fetch", func(t *testing.T) { fetchNote(t, env) })
	}
}

// ocrText sets OCR text on an attachment through the Data API (as the
// desktop app does) and reads it back with get_resource.
func ocrText(t *testing.T, env Env) {
	r := createResource(t, env, map[string]any{"title": unique(t, "scan"), "filename": "scan.pdf", "data_base64": b64(pdfBytes)})
	var plain map[string]any
	mustCall(t, env, "get_resource", map[string]any{"id": r.ID}, &plain)
	if _, ok := plain["ocr_text"]; ok {
		t.Fatalf("no OCR yet, but: %v", plain)
	}
	text := "Invoice 4711\ntotal 99 EUR\n"
	if err := env.Joplin.Write(context.Background(), "PUT", "/resources/"+r.ID, nil, map[string]any{"ocr_text": text, "ocr_status": 2}, nil); err != nil {
		t.Fatal(err)
	}
	var got struct {
		OCRText   string `json:"ocr_text"`
		OCRStatus string `json:"ocr_status"`
	}
	mustCall(t, env, "get_resource", map[string]any{"id": r.ID}, &got)
	if got.OCRText != text || got.OCRStatus != "done" {
		t.Fatalf("ocr: %+v", got)
	}
}

// LongNote is a Markdown note of about size bytes in 40 sections.
func LongNote(size int) string {
	var b strings.Builder
	b.WriteString("# Report\n\nIntro.\n\n")
	per := size / 40
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "## Section %02d\n\n", i)
		for n := 0; n < per; {
			line := fmt.Sprintf("Line of section %02d: nothing much to say here, filler text.\n", i)
			b.WriteString(line)
			n += len(line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

type viewed struct {
	Body      *string `json:"body"`
	BodyBytes int     `json:"body_bytes"`
	Truncated bool    `json:"body_truncated"`
	More      string  `json:"more"`
	Outline   []struct {
		Level int    `json:"level"`
		Text  string `json:"text"`
		Bytes int    `json:"bytes"`
	} `json:"outline"`
}

// longNoteSections reads a 100 KB note: cut with an outline by default,
// as an outline, by section, and whole when asked.
func longNoteSections(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Long"), "")
	body := LongNote(100_000)
	id := SeedNote(t, env, nb, "Report", body)

	var def viewed
	mustCall(t, env, "get_note", map[string]any{"id": id}, &def)
	if !def.Truncated || def.Body == nil || len(*def.Body) > 20_000 || !strings.HasPrefix(body, *def.Body) ||
		def.BodyBytes != len(body) || len(def.Outline) != 41 || !strings.Contains(def.More, "section") {
		t.Fatalf("default view: truncated %v, %d bytes of %d, outline %d, more %q", def.Truncated, len(*def.Body), def.BodyBytes, len(def.Outline), def.More)
	}
	var ol viewed
	mustCall(t, env, "get_note", map[string]any{"id": id, "view": "outline"}, &ol)
	if ol.Body != nil || len(ol.Outline) != 41 || ol.Outline[18].Text != "Section 17" || ol.Outline[18].Level != 2 {
		t.Fatalf("outline: %+v", ol.Outline)
	}
	start := strings.Index(body, "## Section 17\n")
	end := strings.Index(body, "## Section 18\n")
	var sec viewed
	mustCall(t, env, "get_note", map[string]any{"id": id, "view": "section", "heading": "## Section 17"}, &sec)
	if sec.Body == nil || *sec.Body != body[start:end] || ol.Outline[18].Bytes != end-start {
		t.Fatalf("section: %d bytes, want %d", len(*sec.Body), end-start)
	}
	wantErr(t, env, "get_note", map[string]any{"id": id, "view": "section", "heading": "Nowhere"}, domainerr.InvalidArgument)
	wantErr(t, env, "get_note", map[string]any{"id": id, "view": "section"}, domainerr.InvalidArgument)
	if env.MaxResponseChars == 0 {
		var full viewed
		mustCall(t, env, "get_note", map[string]any{"id": id, "view": "full"}, &full)
		if full.Body == nil || *full.Body != body || full.Truncated {
			t.Fatal("full view is not the whole body")
		}
	}
}

// revisionStep is one step of a revision chain Joplin 3.5.1's own
// diff-match-patch wrote (pkg/joplin/revision/testdata).
type revisionStep struct {
	TitleDiff string `json:"title_diff"`
	BodyDiff  string `json:"body_diff"`
	Title     string `json:"title"`
	Body      string `json:"body"`
}

func revisionChain(t *testing.T) []revisionStep {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "joplin", "revision", "testdata", "dmp_chain.json"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []revisionStep
	if err := json.Unmarshal(b, &steps); err != nil {
		t.Fatal(err)
	}
	return steps
}

// PlantRevisions stores a revision chain for note the way the apps sync
// one (POST /revisions in their format) and returns the ids, oldest first.
func PlantRevisions(t testing.TB, env Env, note string, steps []revisionStep) []string {
	t.Helper()
	var ids []string
	for i, s := range steps {
		rev := map[string]any{
			"id": joplin.NewID(), "item_type": 1, "item_id": note, "item_updated_time": 1_700_000_000_000 + int64(i)*60_000,
			"title_diff": s.TitleDiff, "body_diff": s.BodyDiff, "metadata_diff": `{"new":{},"deleted":[]}`, "encryption_applied": 0,
		}
		if i > 0 {
			rev["parent_id"] = ids[i-1]
		}
		if err := env.Joplin.Write(context.Background(), "POST", "/revisions", nil, rev, nil); err != nil {
			t.Fatalf("plant revision %d: %v", i, err)
		}
		ids = append(ids, rev["id"].(string))
	}
	return ids
}

// noteHistory lists and rebuilds planted revisions and restores one in
// place through preview, apply and undo.
func noteHistory(t *testing.T, env Env) {
	steps := revisionChain(t)
	nb := Folder(t, env, unique(t, "History"), "")
	now := steps[len(steps)-1].Body + "Edited since.\n"
	id := SeedNote(t, env, nb, "Plan now", now)
	other := SeedNote(t, env, nb, "Other", "x")
	revs := PlantRevisions(t, env, id, steps)
	otherRevs := PlantRevisions(t, env, other, steps[:1])

	var list struct {
		Revisions []struct {
			ID              string `json:"id"`
			NoteUpdatedTime int64  `json:"note_updated_time"`
		} `json:"revisions"`
		HasMore bool `json:"has_more"`
	}
	mustCall(t, env, "list_note_revisions", map[string]any{"note_id": id}, &list)
	if len(list.Revisions) != len(revs) || list.HasMore || list.Revisions[0].ID != revs[len(revs)-1] || list.Revisions[len(revs)-1].ID != revs[0] {
		t.Fatalf("list: %+v, planted %v", list, revs)
	}
	for i, rid := range revs {
		var got struct {
			Title string  `json:"title"`
			Body  *string `json:"body"`
			Diff  string  `json:"diff"`
		}
		mustCall(t, env, "get_note_revision", map[string]any{"note_id": id, "revision_id": rid, "diff": true}, &got)
		if got.Title != steps[i].Title || got.Body == nil || *got.Body != steps[i].Body || !strings.Contains(got.Diff, "+Edited since.") {
			t.Fatalf("revision %d: %q %v, diff %q", i, got.Title, got.Body, got.Diff)
		}
	}
	wantErr(t, env, "get_note_revision", map[string]any{"note_id": id, "revision_id": otherRevs[0]}, domainerr.NotFound)
	wantErr(t, env, "get_note_revision", map[string]any{"note_id": id, "revision_id": joplin.NewID()}, domainerr.NotFound)

	// Restore revision 2 in place, then undo.
	_, applied := PreviewAndApply(t, env, []Change{{"note": id, "op": "restore", "target": revs[2]}})
	if n := readNote(t, env, id); n.Title != steps[2].Title || n.Body != steps[2].Body || n.ParentID != nb {
		t.Fatalf("restored: %q", n.Title)
	}
	if c := countNotes(t, env, nb, steps[2].Title); c != 1 {
		t.Fatalf("restore made a copy: %d notes", c)
	}
	var undone Undone
	mustCall(t, env, "undo_note_changes", map[string]any{"receipt_id": applied.ReceiptID}, &undone)
	if n := readNote(t, env, id); n.Title != "Plan now" || n.Body != now {
		t.Fatalf("undo: %q", n.Title)
	}
	// Another note's revision cannot be restored here.
	var p Preview
	mustCall(t, env, "preview_note_changes", map[string]any{"changes": []Change{{"note": id, "op": "restore", "target": otherRevs[0]}}}, &p)
	if p.Status == "applicable" || len(p.Problems) != 1 {
		t.Fatalf("foreign revision: %+v", p)
	}
}

// fetchNote reads a note with fetch (ChatGPT's convention); a trashed note
// is not found.
func fetchNote(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Fetch"), "")
	id := SeedNote(t, env, nb, "Quarterly plan", "Grow.\n")
	var got struct {
		ID       string            `json:"id"`
		Title    string            `json:"title"`
		Text     string            `json:"text"`
		URL      string            `json:"url"`
		Metadata map[string]string `json:"metadata"`
	}
	mustCall(t, env, "fetch", map[string]any{"id": id}, &got)
	if got.ID != id || got.Title != "Quarterly plan" || got.Text != "Grow.\n" ||
		got.URL != "joplin://x-callback-url/openNote?id="+id || got.Metadata["notebook_id"] != nb {
		t.Fatalf("fetch: %+v", got)
	}
	trashDirect(t, env, "notes", id)
	wantErr(t, env, "fetch", map[string]any{"id": id}, domainerr.NotFound)
}
