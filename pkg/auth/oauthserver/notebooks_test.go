package oauthserver

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

// chooserStub approves like consentStub and shares fixed notebooks.
type chooserStub struct {
	consentStub
	sc notebookscope.Scope
}

func (c *chooserStub) Chosen(*http.Request) (notebookscope.Scope, string) {
	return c.sc, "read: Work; write: Work/Inbox"
}

// TestGrantKeepsItsNotebooks: the notebooks the owner chose reach every
// access token of the grant, across a refresh and a restart, and the
// operator sees their names; a Consent that asks nothing grants all.
func TestGrantKeepsItsNotebooks(t *testing.T) {
	dir := t.TempDir()
	a := newASTest(t, dir)
	want := notebookscope.New(notebookscope.Only("0123456789abcdef0123456789abcdef"), notebookscope.Only("fedcba9876543210fedcba9876543210"))
	a.as.cfg.Consent = &chooserStub{consentStub: consentStub{decision: Approved}, sc: want}
	client, access, rt := a.tokens()
	check := func(a *asTest, tok, when string) {
		t.Helper()
		p, err := a.as.VerifyAccessToken(t.Context(), tok)
		if err != nil || !reflect.DeepEqual(p.Notebooks, want) {
			t.Fatalf("%s: notebooks %+v (%v), want %+v", when, p.Notebooks, err, want)
		}
	}
	check(a, access, "first token")
	status, out := a.token(refresh(client, rt))
	if status != 200 {
		t.Fatalf("refresh: %d %v", status, out)
	}
	check(a, out["access_token"].(string), "refreshed token")
	restarted := newASTest(t, dir)
	check(restarted, out["access_token"].(string), "after a restart")
	grants := restarted.as.store.liveGrants()
	if len(grants) != 1 || grants[0].Notebooks != "read: Work; write: Work/Inbox" {
		t.Fatalf("operator view: %+v", grants)
	}

	b := newASTest(t, "")
	_, all, _ := b.tokens()
	if p, err := b.as.VerifyAccessToken(t.Context(), all); err != nil || !p.Notebooks.Unlimited() {
		t.Fatalf("a consent without a notebook choice: %+v %v", p.Notebooks, err)
	}
}
