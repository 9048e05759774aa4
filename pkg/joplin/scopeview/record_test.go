package scopeview

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestViewNamesWhatItServes: the ids a call's collector receives are those
// the caller was served after narrowing, and those it wrote; the view's
// own lookups add nothing.
func TestViewNamesWhatItServes(t *testing.T) {
	_, u, tf := joplinfake.Serve(t, "record-test-token-0123456789")
	c, err := joplin.New(joplin.Config{BaseURL: u, TokenFile: tf, AvailabilityWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	Install(c, 1000, nil)
	ctx := context.Background()
	mk := func(path string, body map[string]any) string {
		var out struct{ ID string }
		if err := c.Write(joplin.WholeJoplin(ctx), "POST", path, nil, body, &out); err != nil {
			t.Fatal(err)
		}
		return out.ID
	}
	seen, hidden := mk("/folders", map[string]any{"title": "Seen"}), mk("/folders", map[string]any{"title": "Hidden"})
	visible := mk("/notes", map[string]any{"title": "a", "parent_id": seen})
	other := mk("/notes", map[string]any{"title": "b", "parent_id": hidden})

	sc, err := notebookscope.Parse(seen, "")
	if err != nil {
		t.Fatal(err)
	}
	call := func(p principal.Principal, do func(context.Context)) activity.Entry {
		col := &activity.Collector{}
		do(activity.WithCollector(principal.With(ctx, p), col))
		var e activity.Entry
		col.Fill(&e)
		return e
	}
	list := func(ctx context.Context) {
		var page struct{}
		if err := c.Get(ctx, "/notes", url.Values{"fields": {"id,parent_id"}}, &page); err != nil {
			t.Fatal(err)
		}
	}
	if e := call(principal.Stdio().WithNotebooks(sc), list); !slices.Equal(e.Notes, []string{visible}) {
		t.Errorf("a limited caller's list names %v, want only %s (not %s)", e.Notes, visible, other)
	}
	if e := call(principal.Stdio(), list); !slices.Contains(e.Notes, visible) || !slices.Contains(e.Notes, other) {
		t.Errorf("the owner's list names %v, want both notes", e.Notes)
	}
	e := call(principal.Stdio().WithNotebooks(sc), func(ctx context.Context) {
		if err := c.Get(ctx, "/notes/"+visible, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, "/notes/"+other, nil, nil); err == nil {
			t.Fatal("a hidden note was served")
		}
		if err := c.Write(ctx, "PUT", "/notes/"+visible, nil, map[string]any{"title": "c"}, nil); err != nil {
			t.Fatal(err)
		}
		var fs struct{}
		if err := c.Get(ctx, "/search", url.Values{"type": {"folder"}, "query": {"*"}}, &fs); err != nil {
			t.Fatal(err)
		}
	})
	if !slices.Equal(e.Notes, []string{visible}) || !slices.Equal(e.Notebooks, []string{seen}) {
		t.Errorf("read, refused, written and searched: notes %v, notebooks %v; want [%s] and [%s]", e.Notes, e.Notebooks, visible, seen)
	}
}
