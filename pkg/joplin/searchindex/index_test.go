package searchindex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func openTest(tb testing.TB) *Index {
	tb.Helper()
	ix := openEmpty(tb)
	seed(tb, ix)
	return ix
}

// openEmpty opens an index with no notes, closed when the test ends.
func openEmpty(tb testing.TB) *Index {
	tb.Helper()
	ix, err := Open(context.Background(), filepath.Join(tb.TempDir(), "index.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	return ix
}

var day = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).UnixMilli()

func seed(tb testing.TB, ix *Index) {
	ctx := context.Background()
	must(tb, ix.ReplaceFolders(ctx, []Folder{{"fwork", "", "Work"}, {"fproj", "fwork", "Projects"}, {"fhome", "", "Home"}}))
	must(tb, ix.ReplaceTags(ctx, []Tag{{"toffice", "office"}, {"tspam", "spam"}, {"timp", "important"}}, nil))
	must(tb, ix.PutNotes(ctx, []Note{
		{ID: "n1", ParentID: "fwork", Title: "Shopping list", Body: "milk, eggs and coffee", CreatedTime: day, UpdatedTime: day, TagIDs: []string{"toffice"}},
		{ID: "n2", ParentID: "fproj", Title: "Project plan", Body: "Swimming pool budget; the café opens", CreatedTime: day - 86400000*400, UpdatedTime: day + 1, TagIDs: []string{"toffice", "timp"}},
		{ID: "n3", ParentID: "fhome", Title: "Groceries", Body: "list of shopping for the weekend", IsTodo: true, TodoDue: day + 86400000, CreatedTime: day, UpdatedTime: day + 2, TagIDs: []string{"tspam"}},
		{ID: "n4", ParentID: "fhome", Title: "Old coffee note", Body: "trashed coffee", CreatedTime: day, UpdatedTime: day + 3, Deleted: day + 4},
		{ID: "n5", ParentID: "fwork", Title: "Done task", Body: "finished swim", IsTodo: true, TodoCompleted: day, CreatedTime: day, UpdatedTime: day + 5},
	}))
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func ids(hits []Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.ID)
	}
	slices.Sort(out)
	return out
}

func TestSearchQueries(t *testing.T) {
	ix := openTest(t)
	for query, want := range map[string]string{
		`coffee`:                           "n1",
		`COFFEE milk`:                      "n1",
		`cafe`:                             "n2",
		`"shopping list"`:                  "n1",
		`"list shopping"`:                  "",
		`shopping`:                         "n1,n3",
		`shop`:                             "n1,n3",
		`swim*`:                            "n2,n5",
		`shopping -milk`:                   "n3",
		`title:shopping`:                   "n1",
		`body:shopping`:                    "n3",
		`-body:shopping shopping`:          "n1",
		`any:1 milk weekend`:               "n1,n3",
		`any:1 milk -swimming`:             "n1,n3,n5",
		`tag:office`:                       "n1,n2",
		`tag:OFF*`:                         "n1,n2",
		`tag:office -tag:important`:        "n1",
		`tag:*`:                            "n1,n2,n3",
		`-tag:*`:                           "n5",
		`notebook:work`:                    "n1,n2,n5",
		`notebook:projects`:                "n2",
		`notebook:work notebook:home`:      "n1,n2,n3,n5",
		`-notebook:work`:                   "n3",
		`notebook:w*k list`:                "n1",
		`type:todo`:                        "n3,n5",
		`type:note`:                        "n1,n2",
		`iscompleted:1`:                    "n5",
		`iscompleted:0`:                    "n3",
		`created:20261130`:                 "n1,n3,n5",
		`-created:20261130`:                "n2",
		`due:20261201`:                     "n3",
		`id:n2`:                            "n2",
		`any:1 tag:spam notebook:projects`: "n2,n3",
		`trashed`:                          "",
		`plan:ahead`:                       "",
	} {
		q, err := Parse(query, now)
		if err != nil {
			t.Errorf("Parse(%q): %v", query, err)
			continue
		}
		hits, err := ix.Search(t.Context(), q, Options{Limit: 20})
		if err != nil {
			t.Errorf("Search(%q): %v", query, err)
			continue
		}
		if got := strings.Join(ids(hits), ","); got != want {
			t.Errorf("Search(%q) = %s, want %s", query, got, want)
		}
	}
}

func TestSearchRanksAndMarks(t *testing.T) {
	ix := openTest(t)
	q, _ := Parse(`shopping`, now)
	hits, err := ix.Search(t.Context(), q, Options{Limit: 20})
	must(t, err)
	if len(hits) != 2 || hits[0].ID != "n1" {
		t.Fatalf("a title hit should rank first: %+v", hits)
	}
	if !strings.Contains(hits[0].Snippet, "**Shopping**") {
		t.Errorf("snippet %q does not mark the match", hits[0].Snippet)
	}
	q, _ = Parse(`coffee`, now)
	hits, err = ix.Search(t.Context(), q, Options{Limit: 20, IncludeTrashed: true})
	must(t, err)
	if got := strings.Join(ids(hits), ","); got != "n1,n4" {
		t.Errorf("with trashed: %s, want n1,n4", got)
	}
	hits, err = ix.Search(t.Context(), q, Options{Limit: 1, IncludeTrashed: true})
	must(t, err)
	if len(hits) != 2 {
		t.Errorf("Limit 1 should return one extra hit telling there are more, got %d", len(hits))
	}
}

func TestUpdatesReachSearch(t *testing.T) {
	ix := openTest(t)
	ctx := t.Context()
	find := func(query string) string {
		q, err := Parse(query, now)
		must(t, err)
		hits, err := ix.Search(ctx, q, Options{Limit: 20})
		must(t, err)
		return strings.Join(ids(hits), ",")
	}
	must(t, ix.PutNotes(ctx, []Note{{ID: "n1", ParentID: "fhome", Title: "Renamed", Body: "tea"}}))
	if got := find("coffee"); got != "" {
		t.Errorf("old body still found: %s", got)
	}
	if got := find("tea notebook:home"); got != "n1" {
		t.Errorf("new body and notebook: %s", got)
	}
	must(t, ix.SetNoteTags(ctx, "n1", []string{"tspam"}))
	if got := find("tag:spam"); got != "n1,n3" {
		t.Errorf("tag link: %s", got)
	}
	must(t, ix.ReplaceFolders(ctx, []Folder{{"fhome", "", "Maison"}}))
	if got := find("notebook:maison"); got != "n1,n3" {
		t.Errorf("renamed notebook: %s", got)
	}
	must(t, ix.DeleteNotes(ctx, []string{"n1"}))
	if got := find("tea"); got != "" {
		t.Errorf("deleted note found: %s", got)
	}
}

func TestOpenRebuildsCorruptAndOldFormat(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "index.db")
	ix, err := Open(ctx, path)
	must(t, err)
	must(t, ix.SetMeta(ctx, "cursor", "42"))
	must(t, ix.SetMeta(ctx, "format", "0"))
	ix.Close()
	ix, err = Open(ctx, path)
	if !errors.Is(err, ErrRebuild) || ix == nil {
		t.Fatalf("old format: Open = %v, %v; want a fresh index and ErrRebuild", ix, err)
	}
	if c, _ := ix.Meta(ctx, "cursor"); c != "" {
		t.Errorf("the fresh index kept cursor %q", c)
	}
	ix.Close()
	must(t, os.WriteFile(path, []byte(strings.Repeat("not a database ", 2000)), 0o600))
	ix, err = Open(ctx, path)
	if !errors.Is(err, ErrRebuild) || ix == nil {
		t.Fatalf("corrupt file: Open = %v, %v; want a fresh index and ErrRebuild", ix, err)
	}
	ix.Close()
	if _, err := os.Stat(path + ".bad"); err != nil {
		t.Errorf("the corrupt file was not kept aside: %v", err)
	}
}

// TestDiskFullIsRecognised: SQLite's "database or disk is full" (here: a
// page limit) is told apart, so the indexer logs it as such and retries.
func TestDiskFullIsRecognised(t *testing.T) {
	ix := openTest(t)
	ctx := t.Context()
	var pages int
	must(t, ix.db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages))
	if _, err := ix.db.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	err := ix.PutNotes(ctx, []Note{{ID: "big", Title: "big", Body: strings.Repeat("lorem ipsum ", 50_000)}})
	if err == nil || !IsDiskFull(err) {
		t.Fatalf("PutNotes beyond the page limit: %v, want a disk-full error", err)
	}
	if IsCorrupt(err) {
		t.Errorf("disk full taken for corruption")
	}
	q, _ := Parse("coffee", now)
	if hits, err := ix.Search(ctx, q, Options{Limit: 5}); err != nil || len(hits) != 1 {
		t.Errorf("the index stopped answering after a failed write: %v %v", hits, err)
	}
}

func TestAttachmentTextIsSearchedAndNamed(t *testing.T) {
	ctx := context.Background()
	ix := openEmpty(t)
	res1, res2 := strings.Repeat("a", 32), strings.Repeat("b", 32)
	err := ix.PutNotes(ctx, []Note{
		{ID: "n1", Title: "Receipts", Body: "see attachments", Attachments: []Attachment{
			{ID: res1, UpdatedTime: 5, Text: "Grocery receipt"}, {ID: res2, UpdatedTime: 7, Text: "Invoice 4711 for plumbing"}}},
		{ID: "n2", Title: "Plumbing", Body: "call the plumber"},
	})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := Parse("invoice", time.Now())
	hits, err := ix.Search(ctx, q, Options{Limit: 10})
	if err != nil || len(hits) != 1 || hits[0].ID != "n1" || hits[0].Attachment != res2 ||
		!strings.Contains(hits[0].AttachmentSnippet, "**Invoice**") || strings.Contains(hits[0].Snippet, "\x1e") {
		t.Fatalf("hits %+v, %v", hits, err)
	}
	q, _ = Parse("plumb", time.Now())
	if hits, _ = ix.Search(ctx, q, Options{Limit: 10}); len(hits) != 2 || hits[0].ID != "n2" || hits[0].Attachment != "" {
		t.Fatalf("body match first: %+v", hits)
	}
	stamps, err := ix.AttachmentStamps(ctx)
	if err != nil || stamps[res1] != 5 || stamps[res2] != 7 {
		t.Fatalf("stamps %v %v", stamps, err)
	}
	if ids, err := ix.NotesLinking(ctx, res2); err != nil || len(ids) != 1 || ids[0] != "n1" {
		t.Fatalf("linking %v %v", ids, err)
	}
	// Re-put without attachments: the text and the links go.
	if err := ix.PutNotes(ctx, []Note{{ID: "n1", Title: "Receipts", Body: "see attachments"}}); err != nil {
		t.Fatal(err)
	}
	q, _ = Parse("invoice", time.Now())
	if hits, _ = ix.Search(ctx, q, Options{Limit: 10}); len(hits) != 0 {
		t.Fatalf("stale attachment text: %+v", hits)
	}
}
