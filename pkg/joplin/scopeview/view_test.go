package scopeview_test

import (
	"context"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

const token = "fake-joplin-token-0123456789"

// TestNoPrincipalIsRefused: the view fails closed. A request whose context
// carries no principal is refused with UNAUTHENTICATED, read or write,
// before it reaches Joplin; notebridge's own work (System) and an
// unlimited caller see everything; /ping passes for every context.
func TestNoPrincipalIsRefused(t *testing.T) {
	fake, url, tf := joplinfake.Serve(t, token)
	c, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf})
	if err != nil {
		t.Fatal(err)
	}
	scopeview.Install(c, 1000, nil)
	system := principal.With(context.Background(), principal.System())
	var f struct{ ID string }
	if err := c.Write(system, "POST", "/folders", nil, map[string]any{"title": "Private"}, &f); err != nil {
		t.Fatal(err)
	}
	before := len(fake.Requests())

	bare := context.Background()
	for _, err := range []error{
		c.Get(bare, "/notes", nil, nil),
		c.Get(bare, "/folders/"+f.ID, nil, nil),
		c.Get(bare, "/events", nil, nil),
		c.Write(bare, "POST", "/notes", nil, map[string]any{"title": "x", "parent_id": f.ID}, nil),
		c.Write(bare, "DELETE", "/folders/"+f.ID, nil, nil, nil),
	} {
		if !domainerr.HasCode(err, domainerr.Unauthenticated) {
			t.Errorf("a request without a principal: %v, want UNAUTHENTICATED", err)
		}
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Errorf("%d refused requests reached Joplin", n)
	}
	if err := c.Ping(bare); err != nil {
		t.Errorf("ping without a principal: %v", err)
	}
	owner := principal.With(context.Background(), principal.Stdio())
	scoped := principal.With(context.Background(), principal.Stdio().WithNotebooks(notebookscope.New(notebookscope.Only("Work"), notebookscope.Only())))
	for name, ctx := range map[string]context.Context{"system": system, "owner": owner} {
		var page joplin.Page[struct{ ID string }]
		if err := c.Get(ctx, "/folders", nil, &page); err != nil || len(page.Items) != 1 {
			t.Errorf("%s lists %v (%v), want the one notebook", name, page.Items, err)
		}
	}
	if err := c.Get(scoped, "/folders/"+f.ID, nil, nil); !domainerr.HasCode(err, domainerr.NotFound) {
		t.Errorf("a caller limited to Work reads Private: %v", err)
	}
}
