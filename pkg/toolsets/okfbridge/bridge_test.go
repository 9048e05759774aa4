package okfbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

// seeded is a small notebook: a sub-notebook, links in and out of the
// set, tags, a source URL and author, a resource, a non-ASCII title.
type seeded struct {
	nb, sub, outsideNB       string
	a, b, c, outside, res    string
	pathA, pathB, pathC, png string
}

func seed(t testing.TB, h *harness) seeded {
	var s seeded
	s.nb = h.folder(t, "Research", "")
	s.sub = h.folder(t, "Ünterordner", s.nb)
	s.outsideNB = h.folder(t, "Private", "")
	s.outside = h.note(t, s.outsideNB, "Secret plan", "hidden", nil)
	s.res = h.resource(t, "pic.png", []byte("\x89PNG\r\n\x1a\nfake image"))
	s.b = h.note(t, s.sub, "Café notes ☕", "Body of B\n", nil)
	s.a = h.note(t, s.nb, "Alpha", "See [B](:/"+s.b+") and [the plan](:/"+s.outside+").\n\n![pic](:/"+s.res+")\n",
		map[string]any{"source_url": "https://example.com/a", "author": "Ada"})
	s.c = h.note(t, s.nb, "Gamma", "", nil)
	h.tag(t, s.a, "physics")
	h.tag(t, s.a, "reading")
	s.pathA, s.pathB, s.pathC = s.a+".md", "Ünterordner/"+s.b+".md", s.c+".md"
	s.png = "assets/" + s.res + ".png"
	return s
}

func TestExportMapsANotebook(t *testing.T) {
	h, _ := newHarness(t, nil)
	s := seed(t, h)
	out := h.export(t, s.nb)
	if out.Notes != 3 || out.Assets != 1 || !out.Changed || len(out.Created) != 5 {
		t.Fatalf("export = %+v", out)
	}
	h.validate(t)
	a := h.readFile(t, s.pathA)
	for _, want := range []string{
		"type: Joplin Note\n", `title: "Alpha"`, `tags: ["physics", "reading"]`,
		`resource: "https://example.com/a"`, `author: "Ada"`, `joplin_id: "` + s.a + `"`,
		"[B](/" + s.pathB + ")", "![pic](/" + s.png + ")", "the plan (Joplin note: Secret plan)",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("concept A lacks %q:\n%s", want, a)
		}
	}
	if strings.Contains(a, ":/"+s.b) {
		t.Errorf("a link between exported notes was not rewritten:\n%s", a)
	}
	if got := h.readFile(t, s.png); got != "\x89PNG\r\n\x1a\nfake image" {
		t.Errorf("asset = %q", got)
	}
	if !strings.Contains(h.readFile(t, "index.md"), "okf_version: \"0.2\"") {
		t.Error("root index.md does not declare 0.2")
	}
	// The body maps back to the note byte for byte.
	if got := reverseBody(strings.SplitN(a, "---\n", 3)[2]); got != h.readNote(t, s.a).Body {
		t.Errorf("reverse(body) = %q", got)
	}
}

func TestSecondExportIsIdempotentAndNarrow(t *testing.T) {
	h, _ := newHarness(t, nil)
	s := seed(t, h)
	first := h.export(t, s.nb)
	again := h.export(t, s.nb)
	if again.Changed || again.ResultRevision != first.ResultRevision {
		t.Fatalf("unchanged notebook: second export = %+v", again)
	}
	receipts, _ := os.ReadDir(filepath.Join(h.bundle, ".okf", "receipts"))
	if len(receipts) != 1 {
		t.Fatalf("%d receipts after an unchanged re-export, want 1", len(receipts))
	}
	// A renamed, edited note changes its concept only (and the index,
	// which lists titles).
	if err := h.jc.Write(t.Context(), "PUT", "/notes/"+s.c, nil, map[string]any{"title": "Gamma 2", "body": "new"}, nil); err != nil {
		t.Fatal(err)
	}
	third := h.export(t, s.nb)
	if got := strings.Join(third.Updated, ","); got != s.pathC+",index.md" || len(third.Created) != 0 {
		t.Fatalf("after one edit: created %v updated %v", third.Created, third.Updated)
	}
}

func TestImportRoundTripThroughNoteChanges(t *testing.T) {
	h, _ := newHarness(t, nil)
	s := seed(t, h)
	h.export(t, s.nb)
	if p := h.preview(t, s.nb); len(p.Changes)+len(p.NewNotes)+len(p.Conflicts)+len(p.Missing) != 0 || p.Unchanged != 3 {
		t.Fatalf("preview of an untouched export = %+v", p)
	}
	// Curate: retitle and re-tag A, rewrite B's body, add a concept.
	a := h.readFile(t, s.pathA)
	a = strings.Replace(a, `title: "Alpha"`, `title: "Alpha, revised"`, 1)
	a = strings.Replace(a, `tags: ["physics", "reading"]`, `tags: ["physics", "curated"]`, 1)
	h.writeFile(t, s.pathA, a)
	h.writeFile(t, s.pathB, strings.Replace(h.readFile(t, s.pathB), "Body of B", "Body of B, curated; see [Alpha](/"+s.pathA+")", 1))
	h.writeFile(t, "Ünterordner/new-idea.md", "---\ntype: Idea\ntitle: New idea\ntags: [fresh]\n---\nLinks [B](/"+s.pathB+").\n")
	h.validate(t)
	p := h.preview(t, s.nb)
	if len(p.Notes) != 2 || len(p.NewNotes) != 1 || len(p.Conflicts) != 0 || p.Unchanged != 1 {
		t.Fatalf("preview = %+v", p)
	}
	nn := p.NewNotes[0]
	if nn.NotebookID != s.sub || nn.Title != "New idea" || nn.Body != "Links [B](:/"+s.b+").\n" || len(nn.Tags) != 1 {
		t.Fatalf("new note = %+v", nn)
	}
	var prev struct {
		PlanDigest string `json:"plan_digest"`
	}
	h.must(t, "preview_note_changes", map[string]any{"changes": p.Changes}, &prev)
	var applied struct {
		ReceiptID string `json:"receipt_id"`
	}
	h.must(t, "apply_note_changes", map[string]any{"changes": p.Changes, "plan_digest": prev.PlanDigest}, &applied)
	if got := h.readNote(t, s.a).Title; got != "Alpha, revised" {
		t.Fatalf("title after apply = %q", got)
	}
	if got := h.readNote(t, s.b).Body; got != "Body of B, curated; see [Alpha](:/"+s.a+")\n" {
		t.Fatalf("body after apply = %q", got)
	}
	// Joplin now matches the bundle, except for the notes' new times: a
	// re-export brings the bundle up to date, and then nothing differs.
	h.export(t, s.nb)
	if p := h.preview(t, s.nb); len(p.Changes) != 0 || len(p.Conflicts) != 0 {
		t.Fatalf("preview after apply and re-export = %+v", p)
	}
	h.must(t, "undo_note_changes", map[string]any{"receipt_id": applied.ReceiptID}, nil)
	if got := h.readNote(t, s.a).Title; got != "Alpha" {
		t.Fatalf("title after undo = %q", got)
	}
}

func TestImportShowsConflictsAndNeverOverwrites(t *testing.T) {
	h, _ := newHarness(t, nil)
	s := seed(t, h)
	h.export(t, s.nb)
	h.writeFile(t, s.pathC, strings.Replace(h.readFile(t, s.pathC), `title: "Gamma"`, `title: "Gamma from the bundle"`, 1))
	if err := h.jc.Write(t.Context(), "PUT", "/notes/"+s.c, nil, map[string]any{"body": "edited in Joplin"}, nil); err != nil {
		t.Fatal(err)
	}
	// B changed in Joplin only: shown as a conflict too, never reverted.
	if err := h.jc.Write(t.Context(), "PUT", "/notes/"+s.b, nil, map[string]any{"body": "B edited in Joplin"}, nil); err != nil {
		t.Fatal(err)
	}
	p := h.preview(t, s.nb)
	if len(p.Changes) != 0 || len(p.Conflicts) != 2 {
		t.Fatalf("preview = %+v", p)
	}
	// A deleted note is listed, not recreated, and nothing is deleted.
	if err := h.jc.Write(t.Context(), "DELETE", "/notes/"+s.a, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if p := h.preview(t, s.nb); len(p.Missing) != 1 || p.Missing[0].Note != s.a || len(p.NewNotes) != 0 {
		t.Fatalf("preview after a deletion = %+v", p)
	}
	if out := h.export(t, s.nb); len(out.Created) != 0 {
		t.Fatalf("re-export after a deletion created %v", out.Created)
	}
	if _, err := os.Stat(filepath.Join(h.bundle, s.pathA)); err != nil {
		t.Fatalf("the deleted note's concept is gone: %v", err)
	}
}

func TestExportScopes(t *testing.T) {
	h, _ := newHarness(t, nil)
	s := seed(t, h)
	outside := t.TempDir()
	var out exportOut
	derr := h.call(t, "export_notebook_to_okf", map[string]any{"bundle_path": outside, "notebook_id": s.nb}, &out)
	if derr == nil || derr.Code != domainerr.PathRejected {
		t.Fatalf("export outside the roots: %v", derr)
	}
	derr = h.call(t, "export_notebook_to_okf", map[string]any{"bundle_path": h.bundle, "notebook_id": strings.Repeat("0", 32)}, &out)
	if derr == nil || derr.Code != domainerr.NotFound {
		t.Fatalf("export of a missing notebook: %v", derr)
	}
	if entries, _ := os.ReadDir(h.bundle); len(entries) != 0 {
		t.Fatalf("a refused export wrote %d entries", len(entries))
	}
}

// TestExportCrashAtEveryStep fails the store at each commit step of a
// re-export: before the journal the previous bundle stays byte-exact;
// after it, recovery by the next export completes the commit.
func TestExportCrashAtEveryStep(t *testing.T) {
	steps := []string{store.StepLocked, store.StepStaged, store.StepJournaled, "apply:0", "apply:1", store.StepApplied, store.StepVerified, store.StepReceipted}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			fail := false
			h, _ := newHarness(t, func(s string) error {
				if fail && s == step {
					return domainerr.New(domainerr.Cancelled, "injected crash at %s", s)
				}
				return nil
			})
			s := seed(t, h)
			h.export(t, s.nb)
			before := tree(t, h.bundle)
			if err := h.jc.Write(t.Context(), "PUT", "/notes/"+s.c, nil, map[string]any{"title": "Gamma 2", "body": "new"}, nil); err != nil {
				t.Fatal(err)
			}
			fail = true
			derr := h.call(t, "export_notebook_to_okf", map[string]any{"bundle_path": h.bundle, "notebook_id": s.nb, "subnotebooks": true}, nil)
			fail = false
			pastNoReturn := step != store.StepLocked && step != store.StepStaged
			if !pastNoReturn {
				if derr == nil {
					t.Fatal("the injected crash did not fail the export")
				}
				if got := tree(t, h.bundle); !sameTree(got, before) {
					t.Fatal("a crash before the journal changed the bundle")
				}
			}
			after := h.export(t, s.nb)
			h.validate(t)
			if !strings.Contains(h.readFile(t, s.pathC), `title: "Gamma 2"`) {
				t.Fatalf("after recovery the concept is not updated (export %+v)", after)
			}
			if again := h.export(t, s.nb); again.Changed {
				t.Fatal("the export after recovery is not stable")
			}
		})
	}
}

// tree reads every visible bundle file.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
