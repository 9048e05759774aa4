package scope

import (
	"context"
	"testing"

	"github.com/notebridge/notebridge/pkg/registry"
)

func TestRequiredFollowsToolsetAndEffect(t *testing.T) {
	cases := []struct {
		toolset string
		effect  registry.Effect
		want    Scope
		ok      bool
	}{
		{"joplin", registry.EffectRead, NotesRead, true},
		{"joplin", registry.EffectCreate, NotesWrite, true},
		{"joplin", registry.EffectUpdate, NotesWrite, true},
		{"joplin", registry.EffectTrash, NotesWrite, true},
		{"joplin", registry.EffectDeletePermanent, NotesWrite, true},
		{"okf", registry.EffectRead, OKFRead, true},
		{"okf", registry.EffectUpdate, OKFWrite, true},
		{"other", registry.EffectRead, "", false},
		{"", registry.EffectRead, "", false},
	}
	for _, c := range cases {
		got, ok := Required(registry.Operation{Toolset: c.toolset, Effect: c.effect})
		if got != c.want || ok != c.ok {
			t.Errorf("%s/%s: got %q %v, want %q %v", c.toolset, c.effect, got, ok, c.want, c.ok)
		}
	}
}

func TestParseAndSet(t *testing.T) {
	s, err := Parse("  okf:read notes:read okf:read ")
	if err != nil {
		t.Fatal(err)
	}
	if s.String() != "notes:read okf:read" {
		t.Fatalf("String = %q", s.String())
	}
	if !s.Has(NotesRead) || s.Has(NotesWrite) || s.Has("") || s.Has("notes:admin") {
		t.Fatal("Has is wrong")
	}
	if !s.Contains(NewSet(OKFRead)) || s.Contains(NewSet(OKFRead, OKFWrite)) || !s.Contains(Set{}) {
		t.Fatal("Contains is wrong")
	}
	for _, bad := range []string{"notes:admin", "notes:read openid", "NOTES:READ", "notes:read,okf:read"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if e, err := Parse(""); err != nil || !e.Empty() {
		t.Fatalf("empty: %v %v", e, err)
	}
}

func TestPermitsOnlyLimitsOAuthCallers(t *testing.T) {
	write := registry.Operation{Toolset: "joplin", Effect: registry.EffectCreate}
	foreign := registry.Operation{Toolset: "other", Effect: registry.EffectRead}
	if ok, _ := Permits(context.Background(), write); !ok {
		t.Fatal("a caller without scopes (static bearer, stdio) must keep full access")
	}
	if ok, _ := Permits(context.Background(), foreign); !ok {
		t.Fatal("full access covers operations without a scope")
	}
	ro := WithGranted(context.Background(), NewSet(NotesRead, OKFWrite))
	if ok, need := Permits(ro, write); ok || need != NotesWrite {
		t.Fatalf("read-only notes token may write: %v %q", ok, need)
	}
	if ok, _ := Permits(ro, foreign); ok {
		t.Fatal("an OAuth caller called an operation no scope covers")
	}
	if ok, _ := Permits(WithGranted(context.Background(), Set{}), registry.Operation{Toolset: "okf", Effect: registry.EffectRead}); ok {
		t.Fatal("an empty grant permits a read")
	}
}
