package consent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

const (
	workID    = "11111111111111111111111111111111"
	inboxID   = "22222222222222222222222222222222"
	privateID = "33333333333333333333333333333333"
	oldID     = "44444444444444444444444444444444"
)

func testTree(context.Context) (*notebookscope.Tree, error) {
	return notebookscope.NewTree([]notebookscope.Folder{
		{ID: workID, Title: "Work"}, {ID: inboxID, ParentID: workID, Title: "Inbox"},
		{ID: privateID, Title: "Private"}, {ID: oldID, Title: "Old", Trashed: true},
	}), nil
}

// TestConsentAsksForNotebooks: the page shows the notebook tree (not the
// trash) with nothing checked, refuses an approval that shares nothing,
// and shares what the owner checked.
func TestConsentAsksForNotebooks(t *testing.T) {
	ct := newConsentTest(t, "1000-M", `"Notes app"`)
	ct.page.cfg.Notebooks = testTree
	q := ct.query()
	resp, body, cookie, csrf := ct.show(q)
	if resp.StatusCode != 200 {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	for _, want := range []string{`name="all_notebooks"`, `value="` + workID + `"> Work`, `value="` + inboxID + `"> Inbox`,
		`name="write_notebook" value="` + inboxID + `"`, `value="` + privateID + `"> Private`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, oldID) || strings.Contains(body, "checked") {
		t.Fatalf("the page shows a trashed notebook or pre-checks a box:\n%s", body)
	}
	approve := url.Values{"csrf": {csrf}, "passphrase": {passphrase}, "decision": {"approve"}}
	resp, body = ct.submit(q, cookie, approve)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Choose the notebooks to share") {
		t.Fatalf("an approval sharing nothing: %d", resp.StatusCode)
	}
	_, _, cookie, csrf = ct.show(q)
	approve.Set("csrf", csrf)
	approve["notebook"] = []string{workID}
	approve["write_notebook"] = []string{inboxID}
	resp, _ = ct.submit(q, cookie, approve)
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound || loc.Query().Get("code") == "" {
		t.Fatalf("approval: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	r := &http.Request{PostForm: approve}
	r = r.WithContext(context.Background())
	sc, names := ct.page.Chosen(r)
	if want := notebookscope.New(notebookscope.Only(workID), notebookscope.Only(inboxID)); !reflect.DeepEqual(sc, want) ||
		names != "read: Work; write: Work/Inbox" {
		t.Fatalf("chosen %+v %q", sc, names)
	}
}

// TestConsentAcceptsOnlyOfferedBoxes: an approval may check only the boxes
// its page showed. A notebook the tree did not list (unknown, or in the
// trash), a "may change" box on a request that does not ask to change
// notes, or a page whose notebooks changed since it was shown is refused
// with the form and a clear message, and no authorization code is stored.
func TestConsentAcceptsOnlyOfferedBoxes(t *testing.T) {
	const unknownID = "55555555555555555555555555555555"
	ct := newConsentTest(t, "1000-M", `"Notes app"`)
	tree := testTree
	ct.page.cfg.Notebooks = func(ctx context.Context) (*notebookscope.Tree, error) { return tree(ctx) }
	cases := []struct {
		name, scopes string
		read, write  []string
		change       func() // between showing the page and posting it
		want         string
	}{
		{name: "a notebook not in the tree", scopes: "notes:read notes:write", read: []string{workID, unknownID}, want: notOffered},
		{name: "a notebook in the trash", scopes: "notes:read", read: []string{oldID}, want: notOffered},
		{name: "a write box not in the tree", scopes: "notes:read notes:write", read: []string{workID}, write: []string{unknownID}, want: notOffered},
		{name: "a write box on a read-only request", scopes: "notes:read", read: []string{workID}, write: []string{workID}, want: "did not ask to change notes"},
		{name: "a notebook made after the page was shown", scopes: "notes:read", read: []string{workID},
			change: func() {
				tree = func(context.Context) (*notebookscope.Tree, error) {
					return notebookscope.NewTree([]notebookscope.Folder{{ID: workID, Title: "Work"}, {ID: unknownID, Title: "New"}}), nil
				}
			}, want: "changed since this page was loaded"},
	}
	for _, c := range cases {
		tree = testTree
		q := ct.queryFor(c.scopes)
		_, _, cookie, csrf := ct.show(q)
		if c.change != nil {
			c.change()
		}
		form := url.Values{"csrf": {csrf}, "passphrase": {passphrase}, "decision": {"approve"}, "notebook": c.read, "write_notebook": c.write}
		resp, body := ct.submit(q, cookie, form)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %q, want 400 with %q", c.name, resp.StatusCode, resp.Header.Get("Location"), c.want)
		}
		if n := storedCodes(t, ct.dir); n != 0 {
			t.Fatalf("%s: %d authorization codes stored", c.name, n)
		}
	}
	tree = testTree
	q := ct.queryFor("notes:read")
	_, _, cookie, csrf := ct.show(q)
	resp, _ := ct.submit(q, cookie, url.Values{"csrf": {csrf}, "passphrase": {passphrase}, "decision": {"approve"}, "notebook": {inboxID}})
	if resp.Header.Get("Location") == "" || storedCodes(t, ct.dir) != 1 {
		t.Fatalf("an approval of an offered notebook: %d, %d codes", resp.StatusCode, storedCodes(t, ct.dir))
	}
}

// storedCodes is the number of authorization codes in the authorization
// server's state in dir.
func storedCodes(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "oauth", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Codes map[string]json.RawMessage `json:"codes"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return len(st.Codes)
}
