package scope

import (
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
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
