package oauthserver

import (
	"reflect"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

// TestSetGrantNotebooksGovernsTheNextRequest: the console's operator
// narrows a grant while the server runs; the grant's live access token
// and the one its refresh token brings both carry the new notebooks, and
// the operator lists their names.
func TestSetGrantNotebooksGovernsTheNextRequest(t *testing.T) {
	dir := t.TempDir()
	a := newASTest(t, dir)
	client, access, rt := a.tokens()
	grant, err := a.as.VerifyAccessToken(t.Context(), access)
	if err != nil || !grant.Notebooks.Unlimited() {
		t.Fatalf("before: %+v %v", grant.Notebooks, err)
	}
	op := openOperator(t, dir)
	narrow := notebookscope.New(notebookscope.Only("0123456789abcdef0123456789abcdef"), notebookscope.Selection{})
	if err := op.SetGrantNotebooks(grant.GrantID, narrow, "read: Work"); err != nil {
		t.Fatal(err)
	}
	if got, err := op.GrantNotebooks(grant.GrantID); err != nil || !reflect.DeepEqual(got, narrow) {
		t.Fatalf("GrantNotebooks: %+v %v", got, err)
	}
	p, err := a.as.VerifyAccessToken(t.Context(), access)
	if err != nil || !reflect.DeepEqual(p.Notebooks, narrow) {
		t.Fatalf("the live token after narrowing: %+v %v", p.Notebooks, err)
	}
	status, out := a.token(refresh(client, rt))
	if status != 200 {
		t.Fatalf("refresh: %d %v", status, out)
	}
	if p, err := a.as.VerifyAccessToken(t.Context(), out["access_token"].(string)); err != nil || !reflect.DeepEqual(p.Notebooks, narrow) {
		t.Fatalf("the refreshed token: %+v %v", p.Notebooks, err)
	}
	grants, _ := op.Grants()
	if len(grants) != 1 || grants[0].Notebooks != "read: Work" {
		t.Fatalf("operator view: %+v", grants)
	}
	if err := op.SetGrantNotebooks("no-such-grant", narrow, ""); err == nil {
		t.Fatal("an unknown grant was changed")
	}
}
