//go:build integration

package identity

import (
	"context"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// TestRealJoplinIdentity: on real Joplin, the identity recorded from one
// profile survives its restart, and another profile (another container)
// is refused with JOPLIN_CHANGED until forgotten.
func TestRealJoplinIdentity(t *testing.T) {
	root := mcptest.ModuleRoot(t)
	state := t.TempDir()
	ctx := context.Background()
	guarded := func(j *joplintc.Joplin) (*joplin.Client, *Guard) {
		c, err := joplin.New(joplin.Config{BaseURL: j.URL(), TokenFile: j.TokenFile, AvailabilityWait: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		g := New(c, state, nil)
		c.SetGuard(g)
		return c, g
	}
	a := joplintc.Start(t, root)
	ca, _ := guarded(a)
	for _, title := range []string{"Personal", "Work"} {
		if err := ca.Write(joplin.Unguarded(ctx), "POST", "/folders", nil, map[string]any{"title": title}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ca.Get(ctx, "/notes", nil, nil); err != nil {
		t.Fatal(err)
	}
	if rec, err := Load(state + "/" + FileName); err != nil || len(rec.Anchors) != 2 {
		t.Fatalf("identity of a real Joplin: %+v %v", rec, err)
	}
	a.Restart(t)
	ca2, _ := guarded(a)
	if err := ca2.Get(ctx, "/notes", nil, nil); err != nil {
		t.Fatalf("the same Joplin after a restart: %v", err)
	}

	b := joplintc.Start(t, root)
	cb, _ := guarded(b)
	err := cb.Get(ctx, "/notes", nil, nil)
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.JoplinChanged {
		t.Fatalf("another real Joplin: %v, want JOPLIN_CHANGED", err)
	}
	if _, err := Forget(state); err != nil {
		t.Fatal(err)
	}
	if err := cb.Get(ctx, "/notes", nil, nil); err != nil {
		t.Fatalf("after forget: %v", err)
	}
}
