package consent

import (
	"context"
	"net/http"
	"net/url"
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
