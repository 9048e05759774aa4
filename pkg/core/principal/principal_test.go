package principal

import (
	"context"
	"reflect"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

func TestZeroPrincipalIsNobody(t *testing.T) {
	if (Principal{}).Known() {
		t.Fatal("the zero Principal is a caller")
	}
	if _, ok := From(context.Background()); ok {
		t.Fatal("a bare context carries a principal")
	}
	if _, ok := From(With(context.Background(), Principal{})); ok {
		t.Fatal("a context carrying the zero Principal counts as a caller")
	}
}

func TestOnlyOAuthGrantsAreLimited(t *testing.T) {
	grant := OAuth("g", scope.NewSet(scope.NotesRead), notebookscope.New(notebookscope.Only("Work"), notebookscope.Only("Work/Inbox")))
	for _, p := range []Principal{Stdio(), StaticMCP(), StaticActions(), grant} {
		if !p.Known() || p.Limited() != (p.Kind() == OAuthGrant) {
			t.Errorf("kind %d: known %v limited %v", p.Kind(), p.Known(), p.Limited())
		}
		got, ok := From(With(context.Background(), p))
		if !ok || !reflect.DeepEqual(got, p) {
			t.Errorf("kind %d does not survive the context", p.Kind())
		}
	}
	if grant.GrantID() != "g" || grant.Scopes() != scope.NewSet(scope.NotesRead) {
		t.Fatalf("grant fields: %+v", grant)
	}
}

func TestSystemSeesEverythingAndIsNoAgent(t *testing.T) {
	s := System()
	if !s.Known() || s.Agent() || s.Limited() || !s.Notebooks().Unlimited() {
		t.Fatalf("System: known %v agent %v limited %v unlimited %v", s.Known(), s.Agent(), s.Limited(), s.Notebooks().Unlimited())
	}
	for _, p := range []Principal{Stdio(), StaticMCP(), StaticActions(), OAuth("g", scope.Set{}, notebookscope.Everything())} {
		if !p.Agent() {
			t.Errorf("kind %d is no agent", p.Kind())
		}
	}
	if (Principal{}).Agent() {
		t.Error("the zero Principal is an agent")
	}
}
